// KernelTun: a GATEWAY off the device's network
tun :: KernelTun(10.77.0.1/24, GATEWAY 10.78.0.1);
tun -> tun;
