// Every IPv4 lookup element on one table (nested prefixes, a /32, a /31,
// the default route, and an address no route covers in the second half).
// Each copy of the input goes through one element; outputs tag the source
// MAC with the element and port (..:0L:0P), so the five must agree; the
// last one has no default route, so its misses are counted drops.
FromDump($IN, STOP true) -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> t :: Tee(5);
out :: ToDump($OUT);
t[0] -> a :: DirectIPLookup(10.0.0.0/8 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 192.168.1.1/32 3, 192.168.1.2/31 4, 0.0.0.0/0 10.0.0.9 5);
t[1] -> b :: RadixIPLookup(10.0.0.0/8 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 192.168.1.1/32 3, 192.168.1.2/31 4, 0.0.0.0/0 10.0.0.9 5);
t[2] -> c :: LinearIPLookup(10.0.0.0/8 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 192.168.1.1/32 3, 192.168.1.2/31 4, 0.0.0.0/0 10.0.0.9 5);
t[3] -> d :: StaticIPLookup(10.0.0.0/8 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 192.168.1.1/32 3, 192.168.1.2/31 4, 0.0.0.0/0 10.0.0.9 5);
t[4] -> e :: LookupIPRoute(10.0.0.0/8 0, 10.0.0.0/24 1, 10.0.1.0/24 2, 192.168.1.1/32 3, 192.168.1.2/31 4, 128.0.0.0/1 5);
a[0] -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:00, 02:00:00:00:00:01) -> out;
a[1] -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:01) -> out;
a[2] -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:02, 02:00:00:00:00:01) -> out;
a[3] -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:03, 02:00:00:00:00:01) -> out;
a[4] -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:04, 02:00:00:00:00:01) -> out;
a[5] -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:05, 02:00:00:00:00:01) -> out;
b[0] -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:00, 02:00:00:00:00:01) -> out;
b[1] -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:01, 02:00:00:00:00:01) -> out;
b[2] -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:02, 02:00:00:00:00:01) -> out;
b[3] -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:03, 02:00:00:00:00:01) -> out;
b[4] -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:04, 02:00:00:00:00:01) -> out;
b[5] -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:05, 02:00:00:00:00:01) -> out;
c[0] -> Unstrip(14) -> EtherRewrite(02:00:00:00:02:00, 02:00:00:00:00:01) -> out;
c[1] -> Unstrip(14) -> EtherRewrite(02:00:00:00:02:01, 02:00:00:00:00:01) -> out;
c[2] -> Unstrip(14) -> EtherRewrite(02:00:00:00:02:02, 02:00:00:00:00:01) -> out;
c[3] -> Unstrip(14) -> EtherRewrite(02:00:00:00:02:03, 02:00:00:00:00:01) -> out;
c[4] -> Unstrip(14) -> EtherRewrite(02:00:00:00:02:04, 02:00:00:00:00:01) -> out;
c[5] -> Unstrip(14) -> EtherRewrite(02:00:00:00:02:05, 02:00:00:00:00:01) -> out;
d[0] -> Unstrip(14) -> EtherRewrite(02:00:00:00:03:00, 02:00:00:00:00:01) -> out;
d[1] -> Unstrip(14) -> EtherRewrite(02:00:00:00:03:01, 02:00:00:00:00:01) -> out;
d[2] -> Unstrip(14) -> EtherRewrite(02:00:00:00:03:02, 02:00:00:00:00:01) -> out;
d[3] -> Unstrip(14) -> EtherRewrite(02:00:00:00:03:03, 02:00:00:00:00:01) -> out;
d[4] -> Unstrip(14) -> EtherRewrite(02:00:00:00:03:04, 02:00:00:00:00:01) -> out;
d[5] -> Unstrip(14) -> EtherRewrite(02:00:00:00:03:05, 02:00:00:00:00:01) -> out;
e[0] -> Unstrip(14) -> EtherRewrite(02:00:00:00:04:00, 02:00:00:00:00:01) -> out;
e[1] -> Unstrip(14) -> EtherRewrite(02:00:00:00:04:01, 02:00:00:00:00:01) -> out;
e[2] -> Unstrip(14) -> EtherRewrite(02:00:00:00:04:02, 02:00:00:00:00:01) -> out;
e[3] -> Unstrip(14) -> EtherRewrite(02:00:00:00:04:03, 02:00:00:00:00:01) -> out;
e[4] -> Unstrip(14) -> EtherRewrite(02:00:00:00:04:04, 02:00:00:00:00:01) -> out;
e[5] -> Unstrip(14) -> EtherRewrite(02:00:00:00:04:05, 02:00:00:00:00:01) -> out;
