#pragma once
/// MetricsServer: the HTTP endpoint Prometheus scrapes (plumb watch --listen). GET or HEAD of
/// /metrics answers with what `render` returns now, as text/plain; version=0.0.4; any other
/// path is 404 and any other method 405. libmicrohttpd (Debian's libmicrohttpd-dev) serves it
/// on one internal thread, at most 16 connections at once, each closed after 10 s idle, so a
/// misbehaving scraper cannot grow plumb's threads or file descriptors. libmicrohttpd's
/// headers stay in metrics_server.cc.
#include <functional>
#include <memory>
#include <string>

#include "schemas/result.h"

namespace plumb::transport {

class MetricsServer {
 public:
  /// Called on the server's thread for every scrape; must be thread-safe.
  using Render = std::function<std::string()>;

  /// Listens on `listen`: "ADDRESS:PORT" with a numeric IPv4 address ("127.0.0.1:9472"), a
  /// bracketed IPv6 one ("[::1]:9472"), or ":PORT" for every address. Port 0 picks a free one
  /// (see port()). Errors ("metrics.listen"): a malformed address, or one that cannot be bound
  /// (in use, not local), named in the message.
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& listen, Render render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// The port it listens on.
  int port() const { return port_; }

 private:
  MetricsServer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace plumb::transport
