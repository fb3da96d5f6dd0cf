// KernelTap: KernelTun with a TAP device: Ethernet frames both ways.
#include "shoal/elements/io/kerneltun.hh"

namespace shoal {

class KernelTap : public KernelTun {
 public:
  KernelTap() : KernelTun(true) {}
};
SHOAL_ELEMENT(
    KernelTap, .name = "KernelTap", .ports = "0-1/1-2", .processing = "a/h",
    .summary = "hands Ethernet frames to the host's own stack through a TAP device, and takes what it sends there",
    .description =
        "KernelTun with a Linux TAP device: the host's stack sends Ethernet frames to what it routes to ADDR/MASK "
        "(ARP included: the device answers ARP), and they leave output 0 with the link header set; frames pushed "
        "or pulled in are given to the host as received on the device (which is promiscuous, as Click makes it: "
        "any destination address is taken). Frames shorter than an Ethernet header are dropped ('too-short'), "
        "longer than MTU plus the header ('exceeds-mtu'). ETHER sets the device's Ethernet address. The other "
        "arguments, handlers and drops are KernelTun's.",
    .args = {{"ADDR", "IPv4 prefix", "the host's address on the device and its network: ADDR/LEN or ADDR/MASK"},
             {"GATEWAY", "IPv4 address", "add a default route through this address (on ADDR's network)"},
             {"TAP", "boolean", "false makes it a KernelTun (default true)"},
             {"DEVNAME", "string", "the device's name (default: the kernel picks tapN)"},
             {"DEV_NAME", "string", "the same as DEVNAME (Click's older name)"},
             {"ETHER", "Ethernet address", "the device's Ethernet address (default: the kernel's random one)"},
             {"MTU", "unsigned", "the device's MTU, without the Ethernet header (default 1500)"},
             {"BURST", "unsigned", "frames read, or pulled, per task run (default 32)"},
             {"HEADROOM", "unsigned", "accepted for Click compatibility"},
             {"IGNORE_QUEUE_OVERFLOWS", "boolean", "do not report a full device queue (ENOBUFS)"}},
    .handlers = {{"dev_name", "r", "the device's name"},
                 {"packets", "r", "frames read from the device"},
                 {"sent", "r", "frames written to the device"},
                 {"selected_calls", "r", "times the device was read"}},
    .example =
        "tap :: KernelTap(10.78.0.1/24, ETHER 2:0:0:0:0:1);\n"
        "tap -> c :: Classifier(12/0806 20/0001, 12/0800, -);\n"
        "c[0] -> ARPResponder(10.78.0.2 2:0:0:0:0:2) -> tap;\n"
        "c[1] -> CheckIPHeader(14) -> IPClassifier(icmp type echo) -> ICMPPingResponder -> EtherMirror -> tap;\n"
        "c[2] -> Discard;");

}  // namespace shoal
