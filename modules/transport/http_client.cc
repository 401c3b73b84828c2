#include "modules/transport/http_client.h"

namespace plumb::transport {

std::string HttpResponse::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::vector<Result<HttpResponse>> HttpClient::SendAll(const std::vector<HttpRequest>& requests) {
  std::vector<Result<HttpResponse>> out;
  out.reserve(requests.size());
  for (const auto& r : requests) out.push_back(Send(r));
  return out;
}

}  // namespace plumb::transport
