#pragma once
/// URL handling for Redfish links. plumb never builds a Redfish URI from a template: every path
/// comes verbatim from a payload (@odata.id, Actions target, Location). These helpers only place
/// such a reference on the BMC's own origin.
#include <string>
#include <string_view>

#include "schemas/result.h"

namespace plumb::transport {

/// Resolves `reference` (a path "/redfish/v1/...", a relative reference, or an absolute URL)
/// against `base_url` with RFC 3986 rules (libcurl's URL API), then puts the result back on
/// `origin`'s scheme://host:port: a BMC behind NAT may put an address we cannot or must not
/// reach in an absolute Location, and credentials never leave the BMC we were told to talk to.
/// The path's case and trailing slash are kept exactly.
Result<std::string> ResolveOnOrigin(std::string_view origin, std::string_view base_url,
                                    std::string_view reference);

/// The origin of `reference` resolved against `base_url` (RFC 3986), written so that equal
/// origins compare equal: "https://bmc.example:443" (scheme and host in lower case, the port
/// always given). Nothing else of the URL (no user, password, path) is in it, so it can be
/// shown. An error for a reference that is not a URI reference.
Result<std::string> ResolvedOrigin(std::string_view base_url, std::string_view reference);

/// "https://host:port" of `url` (no path), or an error for a URL that is not http(s).
Result<std::string> OriginOf(std::string_view url);

/// Path plus query of an absolute URL ("/redfish/v1/Systems/1?$top=2").
std::string PathOf(std::string_view url);

}  // namespace plumb::transport
