#pragma once
/// Who stands behind a run, as the auditor asks: the person at the keyboard (or the CI job and
/// whoever triggered it), the commit's author, committer and verified signer, and who approved
/// the change. Recorded with every apply run (plumb runs, history, audit export).
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace plumb::plans {

struct RunWho {
  std::string operator_user;   ///< the OS user plumb ran as (its uid's name)
  /// Who the environment says ran it, when that is not operator_user: $SUDO_USER (plumb ran
  /// under sudo), else $USER, else $LOGNAME ("" when they name operator_user or nobody). As the
  /// environment claims it: kept beside the uid's name, never instead of it.
  std::string login_user;
  std::string ci;              ///< "github", "gitlab", "" outside CI
  std::string ci_actor;        ///< who triggered the pipeline (GITHUB_ACTOR, GITLAB_USER_LOGIN)
  std::string ci_job;          ///< a link to the job (or its id when no URL is known)
  std::string approver;        ///< --approved-by, else $PLUMB_APPROVED_BY; "" = none recorded
  std::string author;          ///< the commit's author, "Name <email>"
  std::string committer;       ///< the commit's committer
  std::string signer;          ///< the verified signer ("ssh alice (SHA256:..)"), or the note
                               ///< saying why there is none ("not signed; ...")

  nlohmann::json ToJson() const;
  static RunWho FromJson(const nlohmann::json& j);
};

/// Reads an environment variable; nullptr when unset (std::getenv, or a fake in tests).
using EnvLookup = std::function<const char*(const char*)>;

/// Who the environment says is logged in: $SUDO_USER (who typed the command under sudo), else
/// $USER, else $LOGNAME; "" when none is set.
std::string EnvLoginName(const EnvLookup& env);

/// "root (sudo by alice)", "alice": the operator as `plumb runs` and `history` show it.
std::string OperatorText(const RunWho& w);

/// The operator and CI fields from the environment (`os_user`: the uid's name; login_user from
/// SUDO_USER, USER, LOGNAME): GitHub Actions (GITHUB_ACTIONS=true:
/// GITHUB_TRIGGERING_ACTOR, else GITHUB_ACTOR; the run's URL from GITHUB_SERVER_URL,
/// GITHUB_REPOSITORY, GITHUB_RUN_ID) or GitLab CI (GITLAB_CI=true: GITLAB_USER_LOGIN, else
/// GITLAB_USER_NAME; CI_JOB_URL). The approver: `approved_by` when given, else
/// PLUMB_APPROVED_BY (the recipes in examples/ci/ set it from the merge request).
RunWho WhoFromEnvironment(const EnvLookup& env, const std::string& os_user,
                          const std::string& approved_by);

}  // namespace plumb::plans
