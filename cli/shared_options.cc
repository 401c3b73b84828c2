#include "cli/shared_options.h"

namespace plumb::cli {

void AddSourceOptions(CLI::App& sub, std::string& repo, std::string& ref, bool& working_tree) {
  sub.add_option("--repo", repo, "Cluster repo (a git repository)")->capture_default_str();
  sub.add_option("--ref", ref, "Git ref to read: branch, tag, short or full SHA")
      ->capture_default_str();
  sub.add_flag("--working-tree", working_tree,
               "Read the cluster files as they are on disk, uncommitted changes included, "
               "instead of --ref (the output says so)");
}

void AddStoreOption(CLI::App& sub, std::string& store) {
  sub.add_option("--store,--journal", store,
                 "The store: a SQLite file or a postgresql:// URL without a password (that goes "
                 "in $PLUMB_STORE or ~/.pgpass; default as for apply)");
}

void AddHostKeysFlag(CLI::App& sub, bool& accept) {
  sub.add_flag("--accept-new-host-keys", accept,
               "Record host keys of nodes not yet in known_hosts (a changed key is always refused)");
}

void AddNodeLimit(CLI::App& sub, std::string& limit, std::string_view what) {
  sub.add_option("--limit", limit,
                 std::string(what) + ": globs, comma lists, @group, !exclusions (gpu00[1-4],@h100,!gpu003)");
}

CLI::Option* AddFormat(CLI::App& sub, std::string& format, const std::string& help,
                       const std::vector<std::string>& choices) {
  return sub.add_option("--format", format, help)->check(CLI::IsMember(choices))->capture_default_str();
}

}  // namespace plumb::cli
