#include "modules/transport/metrics_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <microhttpd.h>

namespace plumb::transport {
namespace {

constexpr unsigned kMaxConnections = 16;
constexpr unsigned kIdleTimeoutS = 10;

Diagnostic ListenError(const std::string& listen, const std::string& why) {
  return Diagnostic::Error("metrics.listen", fmt::format("--listen {}: {}", listen, why), {}, {},
                           "give ADDRESS:PORT with a numeric address, e.g. 127.0.0.1:9472, "
                           "[::1]:9472, or :9472 for every address");
}

// "127.0.0.1:9472" -> ("127.0.0.1", "9472"); "[::1]:9472" -> ("::1", "9472"); ":9472" -> ("", ...).
bool SplitHostPort(const std::string& s, std::string* host, std::string* port) {
  size_t colon;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    *host = s.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = s.rfind(':');
    if (colon == std::string::npos) return false;
    *host = s.substr(0, colon);
    if (host->find(':') != std::string::npos) return false;   // IPv6 needs brackets
  }
  *port = s.substr(colon + 1);
  if (port->empty() || port->size() > 5) return false;
  for (char c : *port)
    if (c < '0' || c > '9') return false;
  return std::stoi(*port) <= 65535;
}

MHD_Result Answer(MHD_Connection* c, unsigned status, const std::string& body,
                  const char* type) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (r == nullptr) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

}  // namespace

struct MetricsServer::Impl {
  Render render;
  MHD_Daemon* daemon = nullptr;

  static MHD_Result Handle(void* cls, MHD_Connection* c, const char* url, const char* method,
                           const char*, const char*, size_t* upload_size, void**) {
    auto* self = static_cast<Impl*>(cls);
    if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0) {
      if (upload_size != nullptr && *upload_size != 0) {
        *upload_size = 0;   // a request body is read and dropped before the answer
        return MHD_YES;
      }
      return Answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", "text/plain");
    }
    if (std::strcmp(url, "/metrics") != 0)
      return Answer(c, MHD_HTTP_NOT_FOUND, "plumb serves /metrics only\n", "text/plain");
    std::string text;
    try {
      text = self->render();
    } catch (const std::exception&) {
      return Answer(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics unavailable\n", "text/plain");
    }
    return Answer(c, MHD_HTTP_OK, text, "text/plain; version=0.0.4; charset=utf-8");
  }
};

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen,
                                                            Render render) {
  std::string host, port;
  if (!SplitHostPort(listen, &host, &port)) return ListenError(listen, "not ADDRESS:PORT");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;   // never a DNS lookup
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
      rc != 0)
    return ListenError(listen, fmt::format("not a numeric address ({})", gai_strerror(rc)));
  // Our own socket: the bind error is told precisely, and port 0 is read back.
  int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
    std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return ListenError(listen, "cannot listen: " + why);
  }
  freeaddrinfo(res);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  char service[NI_MAXSERV] = "0";
  getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, nullptr, 0, service, sizeof service,
              NI_NUMERICSERV);

  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->impl_ = std::make_unique<Impl>();
  server->impl_->render = std::move(render);
  server->port_ = std::atoi(service);
  server->impl_->daemon = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, nullptr, nullptr, &Impl::Handle, server->impl_.get(),
      MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(fd),
      MHD_OPTION_CONNECTION_LIMIT, kMaxConnections,
      MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutS,
      MHD_OPTION_END);
  if (server->impl_->daemon == nullptr) {
    close(fd);
    return ListenError(listen, "the HTTP server did not start");
  }
  return server;
}

MetricsServer::~MetricsServer() {
  if (impl_ && impl_->daemon != nullptr) {
    // Quiesced, the daemon hands the listening socket back (it would close it itself
    // otherwise); stopping joins its thread and closes every connection.
    MHD_socket listening = MHD_quiesce_daemon(impl_->daemon);
    MHD_stop_daemon(impl_->daemon);
    if (listening != MHD_INVALID_SOCKET) close(listening);
  }
}

}  // namespace plumb::transport
