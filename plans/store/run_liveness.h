#pragma once
/// What `plumb runs` can say of a run the journal shows as running: its process may have
/// stopped without recording its end (a crash, a store that stopped answering). On this host
/// its pid tells; on any host its cluster lock does (a live run renews it, a stopped one leaves
/// it to expire).
#include <string>
#include <vector>

#include "plans/store/journal.h"

namespace plumb::plans {

struct RunLiveness {
  bool live = false;   ///< as far as the store can tell, a process is carrying it now
  std::string state;   ///< what `plumb runs` shows
};

/// `r`'s liveness, asking `j` for its lock and the store's time when it says running.
RunLiveness LivenessOf(const RunRecord& r, Journal& j);

/// The nodes of the run's plan the journal has no row for (`rows`): a live run has not reached
/// them yet; a stopped one never started them (or could not record that it did not).
std::vector<std::string> NodesWithoutRow(const RunRecord& r, const std::vector<NodeRecord>& rows);

/// For a node the journal shows mid-step in a run nobody carries on (`live` false): what is
/// known of where it ended, from its last step in `j`; "" otherwise.
std::string StoppedNodeNote(const RunRecord& r, const NodeRecord& n, bool live, Journal& j);

}  // namespace plumb::plans
