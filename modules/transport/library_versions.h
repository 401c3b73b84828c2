#pragma once
/// The versions of the transport libraries this process runs with (the shared libraries loaded,
/// not the headers built against), for `plumb version` and bug reports.
#include <string>
#include <utility>
#include <vector>

namespace plumb::transport {

/// {"libssh", "0.10.6/openssl/zlib"}, {"libcurl", "7.88.1"}, {"OpenSSL", "3.0.15"}.
std::vector<std::pair<std::string, std::string>> LibraryVersions();

}  // namespace plumb::transport
