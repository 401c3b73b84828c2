#include "inventory/git_source.h"

#include <filesystem>

#include <algorithm>
#include <ctime>
#include <mutex>

#include <fmt/format.h>
#include <git2.h>

#include "schemas/suggest.h"

namespace plumb::inventory {

namespace {

void InitLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string LastGitError() {
  const git_error* e = git_error_last();
  return e != nullptr && e->message != nullptr ? e->message : "unknown libgit2 error";
}

template <class T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() { if (p != nullptr) Free(p); }
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
};

using RepoPtr = Owned<git_repository, git_repository_free>;
using ObjectPtr = Owned<git_object, git_object_free>;
using TreePtr = Owned<git_tree, git_tree_free>;
using EntryPtr = Owned<git_tree_entry, git_tree_entry_free>;
using BlobPtr = Owned<git_blob, git_blob_free>;

// Short names of every branch and tag, for "did you mean" when a ref is unknown.
std::vector<std::string> RefNames(git_repository* repo) {
  std::vector<std::string> names;
  git_strarray refs{};
  if (git_reference_list(&refs, repo) != 0) return names;
  for (size_t i = 0; i < refs.count; ++i) {
    std::string n = refs.strings[i];
    for (const char* prefix : {"refs/heads/", "refs/tags/", "refs/remotes/"}) {
      std::string p = prefix;
      if (n.compare(0, p.size(), p) == 0) {
        n = n.substr(p.size());
        break;
      }
    }
    names.push_back(n);
  }
  git_strarray_dispose(&refs);
  std::sort(names.begin(), names.end());
  return names;
}

Result<Ok> OpenRepo(const std::string& path, RepoPtr& repo) {
  InitLibgit2();
  // NO_SEARCH: a cluster repo inside another repo (plumb's examples/) must not silently resolve
  // to the enclosing repository.
  int rc = git_repository_open_ext(&repo.p, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc != 0) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      return Diagnostic::Error("source.no-repo", fmt::format("{} does not exist", path), {}, {},
                               "check the --repo path");
    return Diagnostic::Error(
        "source.not-a-repo", fmt::format("{} is not a git repository", path), {}, {},
        "make it one (git init && git add -A && git commit -m init), point --repo at the "
        "repository's top directory, or read the files as they are with --working-tree");
  }
  return Ok{};
}

Result<std::string> Resolve(git_repository* repo, const std::string& path, const std::string& ref,
                            git_commit** out_commit) {
  if (ref.empty() || ref.size() > 256 || ref[0] == '-') {
    return Diagnostic::Error("source.unknown-ref", fmt::format("invalid ref '{}'",
                                                               schemas::Printable(ref)));
  }
  if (git_repository_head_unborn(repo) == 1 && ref == "HEAD") {
    return Diagnostic::Error("source.empty-repo",
                             fmt::format("{} has no commits yet", path), {}, {},
                             "commit the cluster files first, or use --working-tree");
  }
  ObjectPtr obj;
  int rc = git_revparse_single(&obj.p, repo, ref.c_str());
  if (rc == GIT_EAMBIGUOUS) {
    return Diagnostic::Error("source.ambiguous-ref",
                             fmt::format("ref '{}' is ambiguous in {}", schemas::Printable(ref), path),
                             {}, {}, "give more characters of the SHA");
  }
  if (rc != 0) {
    std::vector<std::string> names = RefNames(repo);
    std::string hint;
    std::string best = schemas::DidYouMean(ref, names);
    if (!best.empty()) {
      hint = fmt::format("did you mean '{}'? ", best);
    }
    if (!names.empty()) {
      std::string list;
      for (size_t i = 0; i < names.size() && i < 12; ++i) list += (i ? ", " : "") + names[i];
      if (names.size() > 12) list += fmt::format(" (and {} more)", names.size() - 12);
      hint += "known refs: " + list;
    }
    hint += (hint.empty() ? "" : "; ") + std::string("a short or full commit SHA also works");
    return Diagnostic::Error("source.unknown-ref",
                             fmt::format("unknown ref '{}' in {}", schemas::Printable(ref), path),
                             {}, {}, hint);
  }
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj.p, GIT_OBJECT_COMMIT) != 0) {
    return Diagnostic::Error("source.unknown-ref",
                             fmt::format("ref '{}' does not name a commit", schemas::Printable(ref)));
  }
  char sha[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(sha, sizeof sha, git_object_id(peeled));
  if (out_commit != nullptr) {
    *out_commit = reinterpret_cast<git_commit*>(peeled);
  } else {
    git_object_free(peeled);
  }
  return std::string(sha);
}

}  // namespace

struct GitTreeSource::Impl {
  RepoPtr repo;
  TreePtr tree;
};

GitTreeSource::GitTreeSource(std::unique_ptr<Impl> impl, std::string commit)
    : impl_(std::move(impl)), commit_(std::move(commit)) {}

GitTreeSource::~GitTreeSource() = default;

Result<std::unique_ptr<GitTreeSource>> GitTreeSource::Open(const std::string& repo_path,
                                                           const std::string& ref) {
  auto impl = std::make_unique<Impl>();
  if (auto st = OpenRepo(repo_path, impl->repo); !st) return st.error();
  git_commit* commit = nullptr;
  auto sha = Resolve(impl->repo.p, repo_path, ref, &commit);
  if (!sha) return sha.error();
  int rc = git_commit_tree(&impl->tree.p, commit);
  git_commit_free(commit);
  if (rc != 0) {
    return Diagnostic::Error("source.git", fmt::format("cannot read the tree of {}: {}", *sha,
                                                       LastGitError()));
  }
  return std::unique_ptr<GitTreeSource>(new GitTreeSource(std::move(impl), *sha));
}

Result<std::optional<std::string>> GitTreeSource::Read(const std::string& path) const {
  EntryPtr entry;
  int rc = git_tree_entry_bypath(&entry.p, impl_->tree.p, path.c_str());
  if (rc == GIT_ENOTFOUND) return std::optional<std::string>();
  if (rc != 0) {
    return Diagnostic::Error("source.git", fmt::format("cannot read {}: {}", path, LastGitError()),
                             Location{path, 0, 0});
  }
  if (git_tree_entry_type(entry.p) != GIT_OBJECT_BLOB ||
      git_tree_entry_filemode(entry.p) == GIT_FILEMODE_LINK) {
    return Diagnostic::Error("source.not-a-file",
                             fmt::format("{} is not a regular file in this commit", path),
                             Location{path, 0, 0}, {}, "symlinks and submodules are not followed");
  }
  BlobPtr blob;
  if (git_blob_lookup(&blob.p, impl_->repo.p, git_tree_entry_id(entry.p)) != 0) {
    return Diagnostic::Error("source.git", fmt::format("cannot read {}: {}", path, LastGitError()),
                             Location{path, 0, 0});
  }
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob.p));
  return std::optional<std::string>(std::string(data, git_blob_rawsize(blob.p)));
}

Result<std::vector<std::string>> GitTreeSource::List(const std::string& dir) const {
  std::vector<std::string> names;
  EntryPtr entry;
  int rc = git_tree_entry_bypath(&entry.p, impl_->tree.p, dir.c_str());
  if (rc == GIT_ENOTFOUND) return names;
  if (rc != 0 || git_tree_entry_type(entry.p) != GIT_OBJECT_TREE) return names;
  TreePtr sub;
  if (git_tree_lookup(&sub.p, impl_->repo.p, git_tree_entry_id(entry.p)) != 0) {
    return Diagnostic::Error("source.git", fmt::format("cannot list {}: {}", dir, LastGitError()),
                             Location{dir, 0, 0});
  }
  for (size_t i = 0; i < git_tree_entrycount(sub.p); ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(sub.p, i);
    if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) names.push_back(git_tree_entry_name(e));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> ResolveCommit(const std::string& repo_path, const std::string& ref) {
  RepoPtr repo;
  if (auto st = OpenRepo(repo_path, repo); !st) return st.error();
  return Resolve(repo.p, repo_path, ref, nullptr);
}

namespace {

std::string Who(const git_signature* s) {
  if (s == nullptr) return {};
  return fmt::format("{} <{}>", s->name ? s->name : "", s->email ? s->email : "");
}

std::string Utc(const git_signature* s) {
  if (s == nullptr) return {};
  std::time_t t = static_cast<std::time_t>(s->when.time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Result<CommitInfo> ReadCommitInfo(const std::string& repo_path, const std::string& ref) {
  RepoPtr repo;
  if (auto st = OpenRepo(repo_path, repo); !st) return st.error();
  git_commit* c = nullptr;
  auto sha = Resolve(repo.p, repo_path, ref, &c);
  if (!sha) return sha.error();
  Owned<git_commit, git_commit_free> commit;
  commit.p = c;
  CommitInfo info;
  info.commit = *sha;
  for (unsigned i = 0; i < git_commit_parentcount(c); ++i) {
    char p[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(p, sizeof p, git_commit_parent_id(c, i));
    info.parents.push_back(p);
  }
  info.author = Who(git_commit_author(c));
  info.committer = Who(git_commit_committer(c));
  info.author_time = Utc(git_commit_author(c));
  info.commit_time = Utc(git_commit_committer(c));
  if (const char* s = git_commit_summary(c)) info.summary = s;
  git_buf signature = GIT_BUF_INIT, signed_data = GIT_BUF_INIT;
  git_oid oid;
  git_oid_fromstr(&oid, sha->c_str());
  int rc = git_commit_extract_signature(&signature, &signed_data, repo.p, &oid, nullptr);
  if (rc == 0) {
    info.signature.assign(signature.ptr, signature.size);
    info.signed_data.assign(signed_data.ptr, signed_data.size);
  }
  git_buf_dispose(&signature);
  git_buf_dispose(&signed_data);
  if (rc != 0 && rc != GIT_ENOTFOUND)
    return Diagnostic::Error("source.git", fmt::format("cannot read the signature of {}: {}", *sha,
                                                       LastGitError()));
  return info;
}

bool IsGitRepo(const std::string& repo_path) {
  RepoPtr repo;
  return static_cast<bool>(OpenRepo(repo_path, repo));
}

std::string Libgit2Version() {
  int major = 0, minor = 0, rev = 0;
  git_libgit2_version(&major, &minor, &rev);
  return fmt::format("{}.{}.{}", major, minor, rev);
}

}  // namespace plumb::inventory
