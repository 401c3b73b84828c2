#pragma once
/// Pure parsers for the kernel module's probe: `uname -r` and the boot id.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::kernel {

/// `uname -r`: exactly one token like "5.15.0-119-generic".
Result<std::string> ParseUnameRelease(std::string_view text);
/// /proc/sys/kernel/random/boot_id: one UUID.
Result<std::string> ParseBootId(std::string_view text);
/// `grubby --default-kernel` (RHEL): "/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64" -> the release.
Result<std::string> ParseGrubbyDefault(std::string_view text);

/// The kernel GRUB boots next on a Debian/Ubuntu node, from the probe's "boot" part: the
/// `set default=`, `submenu`, `menuentry` and `linux` lines of /boot/grub/grub.cfg (as
/// update-grub writes them), a "---" line, then `grub-editenv list` (saved_entry=, next_entry=).
/// GRUB's rules: a one-time next_entry wins; `set default="${saved_entry}"` (GRUB_DEFAULT=saved)
/// takes saved_entry, empty meaning "0"; an entry is a '>'-separated path whose steps are an
/// index, a title or a $menuentry_id_option id; an entry that is not there falls back to entry
/// 0 (the newest kernel, update-grub lists them newest first). The result is the release in
/// that entry's `linux /boot/vmlinuz-<release>` line.
Result<std::string> ParseGrubNextBoot(std::string_view text);

/// The GRUB menu path (what `grub-set-default` takes) of the entry that boots `release`, from
/// the same text: the first entry, recovery entries aside, whose linux line is
/// /boot/vmlinuz-<release>, preferring one named after the release. Each step is the entry's
/// $menuentry_id_option id where it has one, else its title: ids do not change with
/// GRUB_DISTRIBUTOR (Ubuntu's titles are not Debian's), the submenu layout
/// (GRUB_DISABLE_SUBMENU=y puts every entry at the top) or the language. An error when no
/// entry boots it.
Result<std::string> GrubEntryFor(std::string_view text, std::string_view release);

/// Parts "release", "boot_id", "pm", "boot" -> {"release", "boot_id", "manager", "next_boot",
/// "part_errors"?} (modules/kernel/facts.schema.json). Each part is read on its own
/// (modules/part_facts.h); "boot" is optional: a node without grubby or GRUB's files gives
/// next_boot null (not judged), never a part error.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::kernel
