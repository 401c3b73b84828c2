#include "plans/store/run_who.h"

namespace plumb::plans {
namespace {

std::string Get(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

nlohmann::json RunWho::ToJson() const {
  return {{"operator", operator_user}, {"login_user", login_user}, {"ci", ci},           {"ci_actor", ci_actor},
          {"ci_job", ci_job},          {"approver", approver}, {"author", author},
          {"committer", committer},    {"signer", signer}};
}

RunWho RunWho::FromJson(const nlohmann::json& j) {
  RunWho w;
  if (!j.is_object()) return w;
  w.operator_user = j.value("operator", "");
  w.login_user = j.value("login_user", "");
  w.ci = j.value("ci", "");
  w.ci_actor = j.value("ci_actor", "");
  w.ci_job = j.value("ci_job", "");
  w.approver = j.value("approver", "");
  w.author = j.value("author", "");
  w.committer = j.value("committer", "");
  w.signer = j.value("signer", "");
  return w;
}

std::string OperatorText(const RunWho& w) {
  std::string s = w.operator_user.empty() ? "?" : w.operator_user;
  if (!w.login_user.empty()) s += " (login " + w.login_user + ")";
  return s;
}

std::string EnvLoginName(const EnvLookup& env) {
  // sudo sets SUDO_USER to who typed the command (and USER to the target); otherwise USER (or
  // LOGNAME) names the login, which su and containers may leave different from the uid.
  for (const char* var : {"SUDO_USER", "USER", "LOGNAME"})
    if (std::string v = Get(env, var); !v.empty()) return v;
  return "";
}

RunWho WhoFromEnvironment(const EnvLookup& env, const std::string& os_user,
                          const std::string& approved_by) {
  RunWho w;
  w.operator_user = os_user;
  if (std::string login = EnvLoginName(env); login != os_user) w.login_user = login;
  if (Get(env, "GITHUB_ACTIONS") == "true") {
    w.ci = "github";
    // The triggering actor is who re-ran a job; GITHUB_ACTOR is who started the workflow.
    w.ci_actor = Get(env, "GITHUB_TRIGGERING_ACTOR");
    if (w.ci_actor.empty()) w.ci_actor = Get(env, "GITHUB_ACTOR");
    const std::string server = Get(env, "GITHUB_SERVER_URL"), repo = Get(env, "GITHUB_REPOSITORY"),
                      run = Get(env, "GITHUB_RUN_ID");
    if (!server.empty() && !repo.empty() && !run.empty())
      w.ci_job = server + "/" + repo + "/actions/runs/" + run;
    else
      w.ci_job = run;
  } else if (Get(env, "GITLAB_CI") == "true") {
    w.ci = "gitlab";
    w.ci_actor = Get(env, "GITLAB_USER_LOGIN");
    if (w.ci_actor.empty()) w.ci_actor = Get(env, "GITLAB_USER_NAME");
    w.ci_job = Get(env, "CI_JOB_URL");
    if (w.ci_job.empty()) w.ci_job = Get(env, "CI_JOB_ID");
  }
  w.approver = approved_by.empty() ? Get(env, "PLUMB_APPROVED_BY") : approved_by;
  return w;
}

}  // namespace plumb::plans
