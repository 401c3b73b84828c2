#include "modules/drain/stack_tag.h"

#include <algorithm>
#include <cctype>

namespace plumb::modules {

namespace {
bool TagAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Kubernetes' label value rule: (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?, at most 63.
std::string LabelValueProblem(std::string_view what, std::string_view v) {
  if (v.size() > 63) return std::string(what) + " is over 63 characters (a Kubernetes label value)";
  if (v.empty()) return {};
  if (!TagAlnum(v.front()) || !TagAlnum(v.back()))
    return std::string(what) + " must begin and end with a letter or digit (a Kubernetes label value)";
  for (char c : v)
    if (!TagAlnum(c) && c != '-' && c != '_' && c != '.')
      return std::string(what) + " may hold only letters, digits, '-', '_' and '.'";
  return {};
}
}  // namespace

StackTag TagOf(std::string stack, std::string_view commit) {
  return {std::move(stack), std::string(commit.substr(0, kStackCommitLength))};
}

std::string TagText(const StackTag& tag) {
  if (tag.empty()) return "(none)";
  if (tag.commit.empty()) return tag.stack;
  return (tag.stack.empty() ? std::string("?") : tag.stack) + "@" + tag.commit;
}

std::string TagProblem(const StackTag& tag) {
  // stack_commit_<x> is the commit's feature: a stack named commit_<x> would read back as one.
  if (std::string_view(tag.stack).starts_with(
          kStackCommitFeaturePrefix.substr(kStackFeaturePrefix.size())))
    return "stack name '" + tag.stack + "' begins with 'commit_', which Slurm's features reserve "
           "for the commit (stack_commit_<12 hex>)";
  if (auto p = LabelValueProblem("stack name '" + tag.stack + "'", tag.stack); !p.empty()) return p;
  if (auto p = LabelValueProblem("commit '" + tag.commit + "'", tag.commit); !p.empty()) return p;
  return {};
}

std::vector<std::string> StackFeatures(const StackTag& tag) {
  std::vector<std::string> out;
  if (!tag.stack.empty()) out.push_back(std::string(kStackFeaturePrefix) + tag.stack);
  if (!tag.commit.empty()) out.push_back(std::string(kStackCommitFeaturePrefix) + tag.commit);
  return out;
}

StackTag TagFromFeatures(const std::vector<std::string>& features) {
  StackTag tag;
  for (const auto& f : features) {
    if (std::string_view(f).starts_with(kStackCommitFeaturePrefix)) {
      if (tag.commit.empty()) tag.commit = f.substr(kStackCommitFeaturePrefix.size());
    } else if (std::string_view(f).starts_with(kStackFeaturePrefix)) {
      if (tag.stack.empty()) tag.stack = f.substr(kStackFeaturePrefix.size());
    }
  }
  return tag;
}

std::vector<std::string> WithStackFeatures(const std::vector<std::string>& current,
                                           const StackTag& tag) {
  std::vector<std::string> out;
  for (const auto& f : current)
    if (!f.empty() && !std::string_view(f).starts_with(kStackFeaturePrefix)) out.push_back(f);
  for (auto& f : StackFeatures(tag)) out.push_back(std::move(f));
  return out;
}

std::vector<std::string> StacksInConstraint(std::string_view constraint) {
  // Slurm's constraint grammar: names joined by & | , and grouped by () [], a name may carry
  // *count or :count after it; "!" does not negate features. A name is what lies between.
  std::vector<std::string> out;
  size_t i = 0;
  while (i < constraint.size()) {
    size_t j = i;
    while (j < constraint.size() && std::string_view("&|,()[]*:! \t").find(constraint[j]) ==
                                        std::string_view::npos)
      ++j;
    std::string_view name = constraint.substr(i, j - i);
    if (std::string_view(name).starts_with(kStackFeaturePrefix) && !std::string_view(name).starts_with(kStackCommitFeaturePrefix) &&
        name.size() > kStackFeaturePrefix.size()) {
      std::string s(name.substr(kStackFeaturePrefix.size()));
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    }
    // Skip the operator, and a count after * or :.
    if (j < constraint.size() && (constraint[j] == '*' || constraint[j] == ':')) {
      ++j;
      while (j < constraint.size() && std::isdigit(static_cast<unsigned char>(constraint[j]))) ++j;
    } else {
      j = std::max(j, i) + (j < constraint.size() ? 1 : 0);
    }
    i = std::max(j, i + 1);
  }
  return out;
}

}  // namespace plumb::modules
