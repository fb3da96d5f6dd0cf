// A starting point for /etc/shoal/NAME.click (run by `systemctl start shoal@NAME`):
// count what arrives on an interface, and answer `shoal ctl -u /run/shoal/NAME.sock`.
FromDevice(eth0, PROMISC false) -> c :: Counter -> Discard;
ControlSocket(UNIX, /run/shoal/example.sock, MODE 0660);
