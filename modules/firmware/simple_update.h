#pragma once
/// The body of an UpdateService.SimpleUpdate request, built from what the action accepts
/// (transport/action_info.h) rather than from what most BMCs happen to take (pure).
///
///   ImageURI          always: the image URL.
///   TransferProtocol  the URL's scheme, upper-case, sent when the action lists the parameter
///                     (ActionInfo or inline AllowableValues); a scheme outside its allowable
///                     values is refused before anything is sent (AMI MegaRAC: HTTP, FTP only).
///   Targets           the inventory links to update, sent unless an ActionInfo leaves the
///                     parameter out; every target must be among its AllowableValues if listed.
///   UpdateComponent   AMI's own way to say which component, sent when listed and one of its
///                     values is the target's Id or Name.
/// When the request cannot say which component to update (no Targets parameter, and an
/// UpdateComponent with no matching value) it is refused: the BMC would pick one itself.
/// A required parameter plumb cannot fill is refused by name.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/transport/action_info.h"
#include "schemas/result.h"

namespace plumb::modules::firmware {

struct SimpleUpdateTarget {
  std::string link;   ///< the inventory member's @odata.id
  std::string id;     ///< its Id
  std::string name;   ///< its Name
};

/// `bmc` and `component` (the pin) are for messages; errors point at firmware_images.<component>.
Result<nlohmann::json> BuildSimpleUpdate(const transport::ActionSpec& spec, const std::string& image,
                                         const std::vector<SimpleUpdateTarget>& targets,
                                         const std::string& bmc, const std::string& component);

}  // namespace plumb::modules::firmware
