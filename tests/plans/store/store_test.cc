// The store: which strings are PostgreSQL URLs, which are refused, and that a password never
// survives into what messages show.
#include <doctest/doctest.h>

#include <cstdlib>

#include "plans/store/store.h"

using namespace plumb;

TEST_CASE("store: postgresql:// and postgres:// in any case are URLs; a look-alike is refused") {
  CHECK(plans::IsPostgresStore("postgresql://db/plumb"));
  CHECK(plans::IsPostgresStore("POSTGRESQL://db/plumb"));
  CHECK(plans::IsPostgresStore("postgres://db/plumb"));
  CHECK_FALSE(plans::IsPostgresStore("/var/lib/plumb/journal.db"));
  for (const char* bad : {"pgsql://plumb:S3cr3tPw@db/plumb", "postgresql:/db", "host=db user=plumb password=S3cr3tPw"}) {
    CAPTURE(bad);
    auto j = plans::OpenStore(bad);
    REQUIRE_FALSE(j.ok());
    CHECK(j.error().code == "store.url");
    CHECK(j.error().ToString().find("S3cr3tPw") == std::string::npos);
  }
}

TEST_CASE("store: a server over TCP is verified; a unix socket needs no TLS") {
  auto tcp = plans::CheckedPostgresUrl("postgresql://plumb@db.example/plumb");
  REQUIRE(tcp.ok());
  CHECK(*tcp == "postgresql://plumb@db.example/plumb?sslmode=verify-full");
  auto kept = plans::CheckedPostgresUrl("postgresql://plumb@db.example/plumb?sslmode=verify-ca&sslrootcert=/ca.pem");
  REQUIRE(kept.ok());
  CHECK(kept->find("sslmode=verify-full") == std::string::npos);
  for (const char* weak : {"disable", "allow", "prefer", "require"}) {
    CAPTURE(weak);
    auto r = plans::CheckedPostgresUrl(std::string("postgresql://plumb:S3cr3tPw@db.example/plumb?sslmode=") + weak);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "store.tls");
    CHECK(r.error().ToString().find("S3cr3tPw") == std::string::npos);
  }
  auto caps = plans::CheckedPostgresUrl("POSTGRESQL:///plumb?host=/run/postgresql");
  REQUIRE(caps.ok());
  CHECK(*caps == "postgresql:///plumb?host=/run/postgresql");   // libpq reads lower case only
  auto sock = plans::CheckedPostgresUrl("postgresql:///plumb?host=/run/postgresql&sslmode=disable");
  REQUIRE(sock.ok());
  CHECK(*sock == "postgresql:///plumb?host=/run/postgresql&sslmode=disable");
  auto bad = plans::CheckedPostgresUrl("postgresql://plumb:p%zzS3cr3tPw@db/plumb");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "store.url");
  CHECK(bad.error().ToString().find("S3cr3tPw") == std::string::npos);
}

TEST_CASE("store: every form of password is hidden in what messages show") {
  CHECK(plans::RedactStore("postgresql://plumb:S3cr3tPw@db/plumb") == "postgresql://plumb:***@db/plumb");
  CHECK(plans::RedactStore("postgresql://plumb:S3/cr?et@db/plumb") == "postgresql://plumb:***@db/plumb");
  CHECK(plans::RedactStore("postgresql://plumb@db/plumb?password=S3cr3tPw&port=5") ==
        "postgresql://plumb@db/plumb?password=***&port=5");
  CHECK(plans::RedactStore("postgresql://plumb@db/plumb?sslpassword=S3cr3tPw") ==
        "postgresql://plumb@db/plumb?sslpassword=***");
  CHECK(plans::RedactStore("host=db password=S3cr3tPw user=plumb").find("S3cr3tPw") == std::string::npos);
  CHECK(plans::RedactStore("/var/lib/plumb/journal.db") == "/var/lib/plumb/journal.db");
  const std::string store = "postgresql://plumb:S3cr3tPw@db/plumb";
  CHECK(plans::ScrubSecrets("could not connect to \"postgresql://plumb:S3cr3tPw@db/plumb\": S3cr3tPw", store)
            .find("S3cr3tPw") == std::string::npos);
}

TEST_CASE("store: hiding secrets ends when what hides them contains them") {
  // A store without a password is shown as itself: quoted by libpq, it is replaced by the same
  // text, which must not be searched again (it was, forever).
  const std::string plain = "postgresql:///plumb?host=/run/postgresql";
  CHECK(plans::ScrubSecrets("could not read \"" + plain + "\"", plain) == "could not read \"" + plain + "\"");
  // A password of stars: "***" holds "**".
  CHECK(plans::ScrubSecrets("auth failed for ** twice: **", "postgresql://plumb:**@db/plumb") ==
        "auth failed for *** twice: ***");
  CHECK(plans::RedactStore("postgresql://plumb@db/plumb?password=*****") == "postgresql://plumb@db/plumb?password=***");
}

TEST_CASE("store: a password on the command line is refused, pointing to PLUMB_STORE and .pgpass") {
  for (const char* flag : {"postgresql://plumb:S3cr3tPw@db/plumb", "postgresql://plumb@db/plumb?password=S3cr3tPw",
                           "postgresql:///plumb?host=/run/pg&sslpassword=S3cr3tPw",
                           "host=db user=plumb password=S3cr3tPw"}) {
    CAPTURE(flag);
    auto r = plans::ChosenStore(flag);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "store.password-in-argv");
    CHECK(r.error().ToString().find("S3cr3tPw") == std::string::npos);
    CHECK(r.error().hint.find("PLUMB_STORE") != std::string::npos);
    CHECK(r.error().hint.find(".pgpass") != std::string::npos);
    CHECK(r.error().hint.find("PGPASSFILE") != std::string::npos);
  }
  // Without a password: as given. Not given: the default (where a password may be).
  auto plain = plans::ChosenStore("postgresql://plumb@db/plumb");
  REQUIRE(plain.ok());
  CHECK(*plain == "postgresql://plumb@db/plumb");
  CHECK(*plans::ChosenStore("/var/lib/plumb/journal.db") == "/var/lib/plumb/journal.db");
  setenv("PLUMB_STORE", "postgresql://plumb:S3cr3tPw@db/plumb", 1);
  auto env = plans::ChosenStore("");
  unsetenv("PLUMB_STORE");
  REQUIRE(env.ok());
  CHECK(*env == "postgresql://plumb:S3cr3tPw@db/plumb");
}

TEST_CASE("store: only failures that can pass by waiting are retried") {
  // An outage, a restart, a server that is busy: wait for it.
  for (const char* passes : {
           "connection to server at \"db\" (10.0.0.5), port 5432 failed: Connection refused\n\tIs the server running?",
           "connection to server on socket \"/run/pg/.s.PGSQL.5432\" failed: No such file or directory",
           "connection to server at \"db\", port 5432 failed: timeout expired",
           "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally",
           "connection to server at \"db\", port 5432 failed: FATAL:  the database system is starting up",
           "connection to server at \"db\", port 5432 failed: FATAL:  the database system is shutting down",
           "connection to server at \"db\", port 5432 failed: FATAL:  sorry, too many clients already",
           "could not translate host name \"db\" to address: Temporary failure in name resolution"}) {
    CAPTURE(passes);
    CHECK(plans::StoreErrorIsTransient(passes));
  }
  // What waiting will not fix: fail at once, with libpq's reason.
  for (const char* stays : {
           "connection to server on socket \"/run/pg/.s.PGSQL.5432\" failed: FATAL:  password authentication failed for user \"plumb\"",
           "connection to server at \"db\", port 5432 failed: FATAL:  database \"nope\" does not exist",
           "connection to server at \"db\", port 5432 failed: FATAL:  role \"nobody\" does not exist",
           "invalid sslmode value: \"bogus\"",
           "connection to server at \"db\", port 5432 failed: FATAL:  no pg_hba.conf entry for host \"10.0.0.9\"",
           "connection to server at \"db\", port 5432 failed: server certificate for \"db\" does not match host name",
           "could not translate host name \"dbb\" to address: Name or service not known",
           "fe_sendauth: no password supplied",
           ""}) {
    CAPTURE(stays);
    CHECK_FALSE(plans::StoreErrorIsTransient(stays));
  }
}
