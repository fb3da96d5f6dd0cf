// What FromXDPDevice and ToXDPDevice share: their port arguments and the
// opening of this worker's AF_XDP port (io/xdp.hh).
#pragma once
#include <memory>
#include <string>

#include "shoal/core/args.hh"
#include "shoal/core/element.hh"
#include "shoal/io/xdp.hh"

namespace shoal {

// Reads DEVNAME, QUEUE, MODE, ZEROCOPY, FRAMES, FRAME_SIZE and RING_SIZE.
struct XdpDeviceArgs {
  io::XdpOptions opt;
  void read(Args& a);
  // This worker's port: queue QUEUE + the worker's number; with a receive
  // ring when `rx` or when a FromXDPDevice of this router reads the same
  // interface (both share the socket of the queue).
  std::shared_ptr<io::XskPort> open(Element* e, bool rx) const;
};

// The receive element, found by the sending one on the same interface.
class XdpReceiver {
 public:
  virtual ~XdpReceiver() = default;
  virtual const std::string& xdp_dev() const = 0;
};

}  // namespace shoal
