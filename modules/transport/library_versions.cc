#include "modules/transport/library_versions.h"

#include <curl/curl.h>
#include <libssh/libssh.h>
#include <openssl/crypto.h>

namespace plumb::transport {

std::vector<std::pair<std::string, std::string>> LibraryVersions() {
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  return {
      {"libssh", ssh_version(0) != nullptr ? ssh_version(0) : "unknown"},
      {"libcurl", curl != nullptr && curl->version != nullptr ? curl->version : "unknown"},
#ifdef OPENSSL_VERSION_STRING
      {"OpenSSL", OpenSSL_version(OPENSSL_VERSION_STRING)},   // "3.0.15"
#else
      {"OpenSSL", OpenSSL_version(OPENSSL_VERSION)},          // "OpenSSL 1.1.1w  11 Sep 2023"
#endif
  };
}

}  // namespace plumb::transport
