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
  // an index too big for any number is an entry that is not there (GRUB boots the first)
  auto big = kernel::ParseGrubNextBoot(
      "   set default=\"${saved_entry}\"\nmenuentry 'A' {\n\tlinux /boot/vmlinuz-1.0\n}\n---\n"
      "saved_entry=99999999999999999999999999\n");
  REQUIRE(big.ok());
  CHECK(*big == "1.0");
}

TEST_CASE("GRUB on Debian: other titles, and with GRUB_DISABLE_SUBMENU=y every entry at the top") {
  // An Ubuntu title saved on a Debian node is an entry that is not there: entry 0 boots.
  auto next = kernel::ParseGrubNextBoot(ReadFixture("kernel/grub-boot-debian-nosubmenu.txt"));
  REQUIRE(next.ok());
  CHECK(*next == "6.1.0-21-amd64");
  auto sub = kernel::ParseGrubNextBoot(ReadFixture("kernel/grub-boot-debian-submenu.txt"));
  REQUIRE(sub.ok());
  CHECK(*sub == "6.1.0-21-amd64");
}

TEST_CASE("GRUB entry for a release: by id where there is one, the release's own entry, never recovery") {
  const std::string uuid = "167071fd-71fd-4167-81fd-432d4cfa64ed";
  const std::string ubuntu = ReadFixture("kernel/grub-boot-ubuntu-saved-id.txt");
  auto e = kernel::GrubEntryFor(ubuntu, "5.15.0-105-generic");
  REQUIRE(e.ok());
  CHECK(*e == "gnulinux-advanced-" + uuid + ">gnulinux-5.15.0-105-generic-advanced-" + uuid);
  // The newest kernel is also what the top "Ubuntu" entry boots today; that entry follows
  // the next kernel installed, so the release's own entry is the one saved.
  auto newest = kernel::GrubEntryFor(ubuntu, "5.15.0-119-generic");
  REQUIRE(newest.ok());
  CHECK(*newest == "gnulinux-advanced-" + uuid + ">gnulinux-5.15.0-119-generic-advanced-" + uuid);

  const std::string d = "0b9e2f3a-5c1d-4e6f-8a7b-9c0d1e2f3a4b";
  auto flat = kernel::GrubEntryFor(ReadFixture("kernel/grub-boot-debian-nosubmenu.txt"), "6.1.0-18-amd64");
  REQUIRE(flat.ok());
  CHECK(*flat == "gnulinux-6.1.0-18-amd64-advanced-" + d);
  auto nested = kernel::GrubEntryFor(ReadFixture("kernel/grub-boot-debian-submenu.txt"), "6.1.0-18-amd64");
  REQUIRE(nested.ok());
  CHECK(*nested == "gnulinux-advanced-" + d + ">gnulinux-6.1.0-18-amd64-advanced-" + d);

  // A hand-written menu without ids: titles, the path through the submenu.
  const std::string titles =
      "menuentry 'Stock' {\n\tlinux /vmlinuz-6.2 ro\n}\n"
      "submenu 'Older' {\n"
      "\tmenuentry 'Kernel 6.1 (recovery mode)' {\n\t\tlinux /vmlinuz-6.1 ro single\n"
      "\tmenuentry 'Kernel 6.1' {\n\t\tlinux /vmlinuz-6.1 ro\n}\n---\n";
  auto t = kernel::GrubEntryFor(titles, "6.1");
  REQUIRE(t.ok());
  CHECK(*t == "Older>Kernel 6.1");
  // Entries from a hand-written 40_custom: double quotes, bare words, a line this reader
  // cannot take apart. None stops the menu from being read; each keeps its place.
  const std::string custom = ubuntu.substr(0, ubuntu.find("---")) +
      "menuentry \"Windows Boot Manager (on /dev/nvme0n1p1)\" --class windows {\n}\n"
      "menuentry Memtest {\n}\n"
      "menuentry 'broken {\n}\n"
      "menuentry \"Pinned \\\"test\\\" kernel\" $menuentry_id_option pinned-test {\n"
      "\tlinux /boot/vmlinuz-6.9.0-test ro\n}\n---\n";
  auto c = kernel::GrubEntryFor(custom, "6.9.0-test");
  REQUIRE(c.ok());
  CHECK(*c == "pinned-test");
  auto by_index = kernel::ParseGrubNextBoot(custom + "saved_entry=6\n");   // Ubuntu, submenu, UEFI, 3 more
  REQUIRE(by_index.ok());
  CHECK(*by_index == "6.9.0-test");
  auto by_title = kernel::ParseGrubNextBoot(custom + "saved_entry=Pinned \"test\" kernel\n");
  REQUIRE(by_title.ok());
  CHECK(*by_title == "6.9.0-test");
  // Only a recovery entry, or none at all, boots it: an error naming the kernel.
  CHECK_FALSE(kernel::GrubEntryFor("menuentry 'K (recovery mode)' {\n\tlinux /vmlinuz-6.1 single\n}\n", "6.1").ok());
  auto none = kernel::GrubEntryFor(ubuntu, "5.15.0-999-generic");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("/boot/vmlinuz-5.15.0-999-generic") != std::string::npos);
  CHECK_FALSE(kernel::GrubEntryFor("", "6.1").ok());
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
  const std::string saved_cmd =
      "if ! grep -qx 'GRUB_DEFAULT=saved' /etc/default/grub; then sed -i '/^GRUB_DEFAULT=/d' "
      "/etc/default/grub && echo GRUB_DEFAULT=saved >>/etc/default/grub; fi";
  CHECK(a[0].params["commands"] ==
        json({saved_cmd, "update-grub",
              "grub-set-default <the entry of /boot/grub/grub.cfg that boots "
              "/boot/vmlinuz-5.15.0-105-generic, read back after>"}));
  // Apply: the entry is looked up in grub.cfg after update-grub, saved, and read back.
  const std::string read(kernel::kGrubReadCommand);
  const std::string uuid = "167071fd-71fd-4167-81fd-432d4cfa64ed";
  const std::string entry = "gnulinux-advanced-" + uuid + ">gnulinux-5.15.0-105-generic-advanced-" + uuid;
  const std::string before = ReadFixture("kernel/grub-boot-ubuntu-saved-unused.txt");
  const std::string after = ReadFixture("kernel/grub-boot-ubuntu-saved-id.txt");
  REQUIRE(after.find("saved_entry=" + entry) != std::string::npos);
  {
    FakeShell shell;
    shell.On(saved_cmd);
    shell.On("update-grub");
    shell.OnEach(read, {before, after});
    shell.On("grub-set-default '" + entry + "'");
    NodeContext ctx;
    ctx.shell = &shell;
    CHECK(m->Apply(ctx, a[0]).ok());
    CHECK(shell.commands_run ==
          std::vector<std::string>{read, saved_cmd, "update-grub", "grub-set-default '" + entry + "'", read});
    CHECK(shell.unexpected.empty());
  }
  // GRUB_DEFAULT set again in /etc/default/grub.d: grub.cfg still says "0", so the saved entry
  // is not used. The step fails, naming what the next boot runs and where to look.
  {
    FakeShell shell;
    shell.On(saved_cmd);
    shell.On("update-grub");
    std::string ignored = after;
    const std::string saved_line = "set default=\"${saved_entry}\"";
    ignored.replace(ignored.find(saved_line), saved_line.size(), "set default=\"0\"");
    shell.OnEach(read, {before, ignored});
    // (the first read finds the entry; the second, after grub-set-default, sees it unused)
    shell.On("grub-set-default '" + entry + "'");
    NodeContext ctx;
    ctx.shell = &shell;
    ApplyOutcome out = m->Apply(ctx, a[0]);
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().message.rfind("grub-set-default '" + entry +
                                        "' did not take effect: the next boot would run 5.15.0-119-generic (", 0) == 0);
    CHECK(out.error().message.find("/etc/default/grub.d") != std::string::npos);
    CHECK(out.error().hint.find("/etc/default/grub.d") != std::string::npos);
  }
  // The pin has no entry, even after update-grub: /etc/default/grub is left as it was, nothing
  // is saved.
  {
    FakeShell shell;
    shell.On(saved_cmd);
    shell.On("update-grub");
    shell.OnEach(read, {before});
    NodeContext ctx;
    ctx.shell = &shell;
    Action gone = a[0];
    gone.after = "5.15.0-999-generic";
    ApplyOutcome out = m->Apply(ctx, gone);
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().message.find("/boot/vmlinuz-5.15.0-999-generic") != std::string::npos);
    CHECK(shell.commands_run == std::vector<std::string>{read, "update-grub", read});
  }
  // An entry id from the node's grub.cfg reaches the shell as one quoted word, whatever it holds.
  {
    const std::string hostile = "   set default=\"${saved_entry}\"\n"
                                "menuentry 'x' $menuentry_id_option 'a'\\''b; reboot; $(id)' {\n"
                                "\tlinux /boot/vmlinuz-5.15.0-105-generic ro\n}\n---\n";
    FakeShell shell;
    shell.On(saved_cmd);
    shell.On("update-grub");
    shell.OnEach(read, {hostile, hostile + "saved_entry=a'b; reboot; $(id)\n"});
    const std::string set = "grub-set-default 'a'\\''b; reboot; $(id)'";
    shell.On(set);
    NodeContext ctx;
    ctx.shell = &shell;
    CHECK(m->Apply(ctx, a[0]).ok());
    CHECK(shell.commands_run == std::vector<std::string>{read, saved_cmd, "update-grub", set, read});
    CHECK(shell.unexpected.empty());
  }

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
  CHECK(cmds[3].get<std::string>().rfind("grub-set-default <the entry of /boot/grub/grub.cfg", 0) == 0);
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
