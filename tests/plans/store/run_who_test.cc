// Who stands behind a run: the operator, the CI job and its actor, the approver.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "plans/store/run_who.h"

using namespace plumb;

namespace {
plans::EnvLookup Env(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("run who: a terminal, GitHub Actions, GitLab CI; the approver's precedence") {
  auto local = plans::WhoFromEnvironment(Env({}), "alice", "");
  CHECK(local.operator_user == "alice");
  CHECK(local.ci.empty());
  CHECK(local.approver.empty());

  auto gh = plans::WhoFromEnvironment(
      Env({{"GITHUB_ACTIONS", "true"}, {"GITHUB_ACTOR", "bob"}, {"GITHUB_TRIGGERING_ACTOR", "carol"},
           {"GITHUB_SERVER_URL", "https://github.example"}, {"GITHUB_REPOSITORY", "org/pod-a"},
           {"GITHUB_RUN_ID", "42"}, {"PLUMB_APPROVED_BY", "dave"}}),
      "runner", "");
  CHECK(gh.ci == "github");
  CHECK(gh.ci_actor == "carol");   // who re-ran it, when someone did
  CHECK(gh.ci_job == "https://github.example/org/pod-a/actions/runs/42");
  CHECK(gh.approver == "dave");
  CHECK(gh.operator_user == "runner");

  auto gl = plans::WhoFromEnvironment(
      Env({{"GITLAB_CI", "true"}, {"GITLAB_USER_LOGIN", "erin"},
           {"CI_JOB_URL", "https://gitlab.example/pod-a/-/jobs/7"}, {"PLUMB_APPROVED_BY", "dave"}}),
      "gitlab-runner", "frank");
  CHECK(gl.ci == "gitlab");
  CHECK(gl.ci_actor == "erin");
  CHECK(gl.ci_job == "https://gitlab.example/pod-a/-/jobs/7");
  CHECK(gl.approver == "frank");   // --approved-by wins over the variable

  plans::RunWho back = plans::RunWho::FromJson(gl.ToJson());
  CHECK(back.ToJson() == gl.ToJson());
  CHECK(plans::RunWho::FromJson(nullptr).operator_user.empty());
}

TEST_CASE("run who: under sudo the uid's name and who typed the command are both kept") {
  // sudo: the uid is root, SUDO_USER names alice (USER says root).
  auto sudo = plans::WhoFromEnvironment(Env({{"SUDO_USER", "alice"}, {"USER", "root"}}), "root", "");
  CHECK(sudo.operator_user == "root");
  CHECK(sudo.login_user == "alice");
  CHECK(plans::OperatorText(sudo) == "root (login alice)");
  // su, a container: USER (or LOGNAME) names someone else than the uid.
  CHECK(plans::WhoFromEnvironment(Env({{"USER", "bob"}}), "root", "").login_user == "bob");
  CHECK(plans::WhoFromEnvironment(Env({{"LOGNAME", "carol"}}), "root", "").login_user == "carol");
  // The same person twice is said once.
  auto same = plans::WhoFromEnvironment(Env({{"USER", "dave"}, {"LOGNAME", "dave"}}), "dave", "");
  CHECK(same.login_user.empty());
  CHECK(plans::OperatorText(same) == "dave");
  // Recorded and read back (older rows have no login_user).
  CHECK(plans::RunWho::FromJson(sudo.ToJson()).login_user == "alice");
  CHECK(plans::RunWho::FromJson(nlohmann::json{{"operator", "root"}}).login_user.empty());
}

TEST_CASE("run who: the login name is SUDO_USER, else USER, else LOGNAME; empty ones are unset") {
  CHECK(plans::EnvLoginName(Env({})).empty());
  CHECK(plans::EnvLoginName(Env({{"LOGNAME", "log"}})) == "log");
  CHECK(plans::EnvLoginName(Env({{"USER", ""}, {"LOGNAME", "log"}})) == "log");
  CHECK(plans::EnvLoginName(Env({{"USER", "user"}, {"LOGNAME", "log"}})) == "user");
  CHECK(plans::EnvLoginName(Env({{"SUDO_USER", "alice"}, {"USER", "root"}})) == "alice");
}
