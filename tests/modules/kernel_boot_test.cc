// The kernel that boots next: the parsers of grubby and GRUB's files (captured formats in
// tests/data/kernel, sources in tests/data/SOURCES.md), the diff that notices a newer kernel
// would boot instead of the pin, and the commands that make the pin the default on each family.
#include <doctest/doctest.h>

#include "fakes/fake_shell.h"
#include "modules/fixtures.h"
#include "modules/kernel/kernel.h"
#include "modules/kernel/parse.h"
#include "modules/package_map.h"
#include "modules/registry.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::FakeShell;
using plumb::testing::ReadFixture;

TEST_CASE("grubby --default-kernel: the release of /boot/vmlinuz-<release>") {
  auto r = kernel::ParseGrubbyDefault(ReadFixture("kernel/grubby-default-kernel-rhel9.txt"));
  REQUIRE(r.ok());
  CHECK(*r == "5.14.0-427.13.1.el9_4.x86_64");
  CHECK_FALSE(kernel::ParseGrubbyDefault("").ok());
  CHECK_FALSE(kernel::ParseGrubbyDefault("/boot/vmlinuz-\n").ok());
  CHECK_FALSE(kernel::ParseGrubbyDefault("The param /boot/vmlinuz-x is incorrect\n").ok());
  CHECK_FALSE(kernel::ParseGrubbyDefault("/boot/vmlinuz-5.14.0;reboot\n").ok());
}

TEST_CASE("GRUB's next boot on Ubuntu: grub.cfg's default, saved_entry, next_entry") {
  struct Case {
    const char* fixture;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{
           // GRUB_DEFAULT=0: entry 0, "Ubuntu", boots the newest installed kernel
           {"kernel/grub-boot-ubuntu-default0.txt", "5.15.0-119-generic"},
           // GRUB_DEFAULT=saved + grub-set-default "Advanced options for Ubuntu>Ubuntu, with Linux X"
           {"kernel/grub-boot-ubuntu-saved-title.txt", "5.15.0-105-generic"},
           // the same entry by its $menuentry_id_option ids
           {"kernel/grub-boot-ubuntu-saved-id.txt", "5.15.0-105-generic"},
           // a saved entry whose kernel is gone: GRUB falls back to entry 0
           {"kernel/grub-boot-ubuntu-saved-gone.txt", "5.15.0-119-generic"},
           // saved_entry without GRUB_DEFAULT=saved in grub.cfg is not read
           {"kernel/grub-boot-ubuntu-saved-unused.txt", "5.15.0-119-generic"},
           // grub-reboot's one-time next_entry wins ("1>0": the submenu's first entry)
           {"kernel/grub-boot-ubuntu-next-entry.txt", "5.15.0-119-generic"},
           // an index path: the submenu's third entry (each kernel has a recovery entry)
           {"kernel/grub-boot-ubuntu-index-path.txt", "5.15.0-105-generic"},
       }) {
    CAPTURE(c.fixture);
    auto r = kernel::ParseGrubNextBoot(ReadFixture(c.fixture));
    REQUIRE(r.ok());
    CHECK(*r == c.want);
  }
  CHECK_FALSE(kernel::ParseGrubNextBoot("---\nsaved_entry=0\n").ok());   // no menu
  CHECK_FALSE(kernel::ParseGrubNextBoot("menuentry 'Ubuntu {\n").ok());  // unterminated quote
  CHECK(kernel::UbuntuMenuEntry("5.15.0-105-generic") ==
        "Advanced options for Ubuntu>Ubuntu, with Linux 5.15.0-105-generic");
}

TEST_CASE("kernel facts: next_boot from the boot part; a node without one is not judged") {
  const Module* m = FindModule("kernel");
  REQUIRE(m);
  std::vector<ProbePart> parts = {{"release", 0, "5.15.0-105-generic\n"},
                                  {"pm", 0, "dpkg\n"},
                                  {"boot", 0, ReadFixture("kernel/grub-boot-ubuntu-default0.txt")}};
  json f = kernel::FactsFromParts(parts);
  CHECK(f["next_boot"] == "5.15.0-119-generic");
  CHECK_FALSE(f.contains("part_errors"));
  parts[2] = {"boot", 127, "plumb-absent: grub-editenv\n"};
  f = kernel::FactsFromParts(parts);
  CHECK(f["next_boot"].is_null());
  CHECK_FALSE(f.contains("part_errors"));
  parts[2] = {"boot", 0, ReadFixture("kernel/grubby-default-kernel-rhel9.txt")};
  CHECK(kernel::FactsFromParts(parts)["next_boot"] == "5.14.0-427.13.1.el9_4.x86_64");
}

TEST_CASE("kernel diff: running the pin while a newer kernel would boot next sets the default") {
  const Module* m = FindModule("kernel");
  json desired = {{"kernel", "5.15.0-105-generic"}};
  // in sync: the pin runs and boots next (or what boots next is unknown)
  CHECK(m->Diff(desired, {{"release", "5.15.0-105-generic"}, {"next_boot", "5.15.0-105-generic"}}).empty());
  CHECK(m->Diff(desired, {{"release", "5.15.0-105-generic"}, {"next_boot", nullptr}}).empty());
  // a newer kernel was installed: Ubuntu would boot it at the next reboot
  auto a = m->Diff(desired, {{"release", "5.15.0-105-generic"}, {"next_boot", "5.15.0-119-generic"},
                             {"manager", "dpkg"}});
  REQUIRE(a.size() == 1);
  CHECK(a[0].id == "kernel.default");
  CHECK(a[0].disruption == Disruption::kNone);
  CHECK(a[0].before == "5.15.0-119-generic");
  CHECK(a[0].summary == "make 5.15.0-105-generic the default boot entry (the next boot would run 5.15.0-119-generic)");
  const std::vector<std::string> deb = {
      "if ! grep -qx 'GRUB_DEFAULT=saved' /etc/default/grub; then sed -i '/^GRUB_DEFAULT=/d' "
      "/etc/default/grub && echo GRUB_DEFAULT=saved >>/etc/default/grub; fi",
      "update-grub", "grub-set-default 'Advanced options for Ubuntu>Ubuntu, with Linux 5.15.0-105-generic'"};
  CHECK(a[0].params["commands"] == json(deb));
  FakeShell shell;
  for (const auto& c : deb) shell.On(c);
  NodeContext ctx;
  ctx.shell = &shell;
  CHECK(m->Apply(ctx, a[0]).ok());
  CHECK(shell.commands_run == deb);
  CHECK(shell.unexpected.empty());

  // RHEL: UPDATEDEFAULT=yes made the last installed kernel the default
  json rhel = {{"kernel", "5.14.0-427.13.1.el9_4.x86_64"}};
  auto r = m->Diff(rhel, {{"release", "5.14.0-427.13.1.el9_4.x86_64"},
                          {"next_boot", "5.14.0-503.11.1.el9_5.x86_64"}, {"manager", "rpm"}});
  REQUIRE(r.size() == 1);
  CHECK(r[0].params["commands"] == json({"grubby --set-default '/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64'"}));
}

TEST_CASE("kernel install: the plan's commands install the pin, then make it the default") {
  const Module* m = FindModule("kernel");
  auto a = m->Diff({{"kernel", "5.15.0-105-generic"}},
                   {{"release", "5.15.0-119-generic"}, {"next_boot", "5.15.0-119-generic"}, {"manager", "dpkg"}});
  REQUIRE(a.size() == 1);
  CHECK(a[0].id == "kernel.install");
  const auto& cmds = a[0].params["commands"];
  REQUIRE(cmds.size() == 4);
  CHECK(cmds[0].get<std::string>().find("apt-get install") != std::string::npos);
  CHECK(cmds[0].get<std::string>().find("'linux-image-5.15.0-105-generic'") != std::string::npos);
  CHECK(cmds[3] == "grub-set-default 'Advanced options for Ubuntu>Ubuntu, with Linux 5.15.0-105-generic'");
  // hostile releases stay one quoted word
  auto h = kernel::KernelDefaultCommands("1'; reboot; '", "dpkg");
  CHECK(h[2] == "grub-set-default 'Advanced options for Ubuntu>Ubuntu, with Linux 1'\\''; reboot; '\\'''");
  CHECK(kernel::KernelDefaultCommands("x", "none").empty());
}

TEST_CASE("package map: rpm driver stream, versionlock around dnf installs, apt commands for the plan") {
  CHECK(DriverModuleStream("550.90.07") == "nvidia-driver:550-dkms");
  CHECK(DnfInstallCommands({{"libnccl", "2.21.5-1+cuda12.4", ""}}) ==
        std::vector<std::string>{"dnf install -y --allowerasing --disableplugin=versionlock 'libnccl-2.21.5-1+cuda12.4'",
                                 "dnf versionlock delete 'libnccl'",
                                 "dnf versionlock add 'libnccl-2.21.5-1+cuda12.4'"});
  auto apt = InstallCommands("dpkg", DriverPackages("550.90.07", "dpkg"));
  REQUIRE(apt.size() == 3);
  CHECK(apt[0] == "apt-cache madison 'cuda-drivers-550'");
  CHECK(apt[2].find("'cuda-drivers-550=550.90.07-*' 'nvidia-driver-550=550.90.07-*'") != std::string::npos);
  CHECK(InstallCommands("none", DriverPackages("550.90.07", "dpkg")).empty());
}
