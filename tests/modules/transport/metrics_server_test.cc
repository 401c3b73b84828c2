// MetricsServer over a real loopback socket: /metrics answers with the render callback's text,
// other paths and methods are refused, bad addresses are located errors, and stopping it gives
// back every file descriptor it took.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "modules/transport/metrics_server.h"

using namespace plumb;

namespace {

// One HTTP/1.0 request to 127.0.0.1:port; the whole response (the server closes after it).
std::string Ask(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

int OpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

}  // namespace

TEST_CASE("metrics server: GET /metrics is the rendered text, as Prometheus text") {
  const int fds = OpenFds();
  {
    std::atomic<int> renders{0};
    auto server = transport::MetricsServer::Start("127.0.0.1:0", [&] {
      ++renders;
      return std::string("# HELP x y\n# TYPE x gauge\nx 1\n");
    });
    REQUIRE_MESSAGE(server.ok(), (server.ok() ? "" : server.error().ToString()));
    const int port = (*server)->port();
    CHECK(port > 0);
    std::string r = Ask(port, "GET /metrics HTTP/1.0\r\n\r\n");
    // libmicrohttpd answers an HTTP/1.0 request as HTTP/1.1 (its version; RFC 9110 6.2).
    CHECK_MESSAGE(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0, r.substr(0, 200));
    CHECK(r.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
    CHECK(r.substr(r.find("\r\n\r\n") + 4) == "# HELP x y\n# TYPE x gauge\nx 1\n");
    CHECK(renders == 1);
    CHECK(Ask(port, "GET / HTTP/1.0\r\n\r\n").find(" 404 ") != std::string::npos);
    CHECK(Ask(port, "DELETE /metrics HTTP/1.0\r\n\r\n").find(" 405 ") != std::string::npos);
    CHECK(renders == 1);   // only /metrics renders

    // The port is taken while it runs.
    auto second = transport::MetricsServer::Start("127.0.0.1:" + std::to_string(port), [] { return std::string(); });
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().code == "metrics.listen");
    CHECK(second.error().message.find("cannot listen") != std::string::npos);
  }
  CHECK(OpenFds() == fds);   // the listening socket and every connection closed
}

TEST_CASE("metrics server: an address that is not ADDRESS:PORT with a numeric address is refused") {
  for (const char* bad : {"9472", "localhost:9472", "127.0.0.1:", "127.0.0.1:99999", "::1:9472",
                          "[::1]9472", "127.0.0.1:94x2"}) {
    INFO(bad);
    auto s = transport::MetricsServer::Start(bad, [] { return std::string(); });
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == "metrics.listen");
    CHECK(s.error().message.find(bad) != std::string::npos);
  }
}
