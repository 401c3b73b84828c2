#include "modules/registry.h"

#include "modules/bios/bios.h"
#include "modules/cuda/cuda.h"
#include "modules/dcgm/dcgm.h"
#include "modules/firmware/firmware.h"
#include "modules/gpu_health/gpu_health.h"
#include "modules/ib_health/ib_health.h"
#include "modules/infiniband/infiniband.h"
#include "modules/kernel/kernel.h"
#include "modules/kernel_modules/kernel_modules.h"
#include "modules/marker/marker.h"
#include "modules/nccl/nccl.h"
#include "modules/nccl_bw/nccl_bw.h"
#include "modules/nccl_conf/nccl_conf.h"
#include "modules/nvidia_driver/nvidia_driver.h"
#include "modules/ofed/ofed.h"
#include "modules/os/os.h"
#include "modules/packages/packages.h"
#include "modules/power/power.h"
#include "modules/roce/roce.h"
#include "modules/services/services.h"
#include "modules/sysctl/sysctl.h"

namespace plumb::modules {

const std::vector<const Module*>& AllModules() {
  // In-band modules (SSH probe).
  static const kernel::KernelModule kKernel;
  static const os::OsModule kOs;
  static const ofed::OfedModule kOfed;
  static const nvidia_driver::NvidiaDriverModule kNvidiaDriver;
  static const cuda::CudaModule kCuda;
  static const nccl::NcclModule kNccl;
  static const packages::PackagesModule kPackages;
  static const kernel_modules::KernelModulesModule kKernelModules;
  static const sysctl::SysctlModule kSysctl;
  static const services::ServicesModule kServices;
  static const infiniband::InfinibandModule kInfiniband;
  static const roce::RoceModule kRoce;
  static const marker::MarkerModule kMarker;
  static const nccl_conf::NcclConfModule kNcclConf;
  // Health checks (`health:`): gpu_health and ib_health are read by gather's probe; dcgm and
  // nccl_bw load the GPUs and run only when asked (ModuleInfo::on_demand, CheckScript).
  static const gpu_health::GpuHealthModule kGpuHealth;
  static const ib_health::IbHealthModule kIbHealth;
  static const dcgm::DcgmModule kDcgm;
  static const nccl_bw::NcclBwModule kNcclBw;
  // Out-of-band modules (Redfish: firmware, bios, power), after the in-band ones. A module is
  // one static instance and one entry here; everything else reads its ModuleInfo.
  static const firmware::FirmwareModule kFirmware;
  static const bios::BiosModule kBios;
  static const power::PowerModule kPower;
  static const std::vector<const Module*> kAll = {
      &kKernel,   &kOs,      &kOfed,          &kNvidiaDriver, &kCuda,       &kNccl,
      &kPackages, &kKernelModules, &kSysctl,  &kServices,     &kInfiniband, &kRoce, &kMarker,
      &kNcclConf,
      &kGpuHealth, &kIbHealth, &kDcgm, &kNcclBw,
      &kFirmware, &kBios,    &kPower,
  };
  return kAll;
}

const Registry& DefaultRegistry() {
  static const Registry kDefault(AllModules());
  return kDefault;
}

const Module* OwnerOf(std::string_view pointer) { return DefaultRegistry().OwnerOf(pointer); }

const Module* FindModule(std::string_view name) { return DefaultRegistry().Find(name); }

const Module* Registry::OwnerOf(std::string_view pointer) const {
  const Module* best = nullptr;
  size_t best_len = 0;
  for (const Module* m : modules_)
    for (std::string_view prefix : m->Info().owns) {
      ModuleInfo one;
      one.owns = {prefix};
      if (one.Owns(pointer) && prefix.size() >= best_len) {
        best = m;
        best_len = prefix.size();
      }
    }
  return best;
}

const Module* Registry::Find(std::string_view name) const {
  for (const Module* m : modules_)
    if (m->Name() == name) return m;
  return nullptr;
}

}  // namespace plumb::modules
