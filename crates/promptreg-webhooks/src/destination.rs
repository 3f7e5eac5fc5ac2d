//! Where a delivery may go: the addresses refused unless the operator
//! allows private destinations, checked for the address connected to,
//! after the name is looked up, so a name cannot rebind past the check.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why `ip` is not a public destination, if it is not: loopback, private,
/// link-local (where cloud metadata services answer), shared, or not a
/// unicast address at all.
pub fn not_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => not_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => not_public_v4(v4),
            None => not_public_v6(v6),
        },
    }
}

fn not_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address, where cloud metadata services answer")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address, where some clouds' metadata services answer")
    } else if a == 0 || ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("not a unicast destination")
    } else if a == 198 && (b == 18 || b == 19) || a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("a reserved address")
    } else {
        None
    }
}

fn not_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address, where some clouds' metadata services answer")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("not a unicast destination")
    } else {
        None
    }
}

/// Which destinations deliveries may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Destinations {
    /// Loopback, private and link-local addresses too
    /// (`--webhooks-allow-private`): for receivers inside the network,
    /// and tests.
    pub allow_private: bool,
}

impl Destinations {
    /// Why a delivery may not connect to `ip`, if it may not.
    pub fn refusal(&self, ip: IpAddr) -> Option<String> {
        if self.allow_private {
            return None;
        }
        not_public(ip).map(|why| {
            format!("refused to connect to {ip}: it is {why}; a server started with --webhooks-allow-private may")
        })
    }
}

impl Destinations {
    /// Why a delivery may not go to `url` when its host is an address
    /// rather than a name (connected to without a lookup): checked when a
    /// webhook is made, and before each request.
    pub fn refusal_of_address_in(&self, url: &url::Url) -> Option<String> {
        let ip = match url.host()? {
            url::Host::Ipv4(ip) => IpAddr::V4(ip),
            url::Host::Ipv6(ip) => IpAddr::V6(ip),
            url::Host::Domain(_) => return None,
        };
        self.refusal(ip)
    }
}

/// Looks names up and keeps the addresses deliveries may reach: the
/// client connects only to what this returns.
pub(crate) struct CheckedResolver(pub(crate) Destinations);

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let destinations = self.0;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refusals = Vec::new();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| match destinations.refusal(addr.ip()) {
                    Some(why) => {
                        refusals.push(why);
                        false
                    }
                    None => true,
                })
                .collect();
            if allowed.is_empty() {
                let why = refusals
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| format!("`{host}` has no address"));
                return Err(format!("`{host}`: {why}").into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

impl CheckedResolver {
    pub(crate) fn shared(destinations: Destinations) -> Arc<CheckedResolver> {
        Arc::new(CheckedResolver(destinations))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_link_local_and_metadata_ranges_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "fd00:ec2::254",
            "fe80::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(not_public(ip.parse().unwrap()).is_some(), "{ip}");
        }
        for ip in [
            "93.184.215.14",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "172.32.0.1",
        ] {
            assert_eq!(not_public(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn the_operator_may_allow_private_destinations() {
        let loopback = "127.0.0.1".parse().unwrap();
        let refused = Destinations::default().refusal(loopback).unwrap();
        assert!(
            refused.contains("loopback") && refused.contains("--webhooks-allow-private"),
            "{refused}"
        );
        let allowed = Destinations {
            allow_private: true,
        };
        assert_eq!(allowed.refusal(loopback), None);
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_at_lookup() {
        let resolver = CheckedResolver(Destinations::default());
        let err = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost resolved to an allowed address"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("loopback"), "{err}");
    }
}
