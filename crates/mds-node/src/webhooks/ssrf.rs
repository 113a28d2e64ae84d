//! Which addresses a delivery may reach (contract 11.2, "SSRF"): never
//! loopback, private, shared (CGNAT), link-local (the cloud metadata
//! address among them), multicast, broadcast, unspecified or reserved
//! ones, in IPv4, IPv6 or IPv4-mapped IPv6. Checked on the URL at creation
//! ([`check_url`]), and on every attempt at connect time: the client
//! resolves names with [`GuardedResolver`], which drops refused addresses
//! after resolving, so a name that resolves differently later is checked
//! again; an IP-literal host is checked before sending ([`refused_host`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether a delivery may not reach `ip`.
pub fn refused(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refused_v4(v4),
            None => refused_v6(v6),
        },
    }
}

fn refused_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || a >= 240
}

fn refused_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || ip.to_ipv4().is_some_and(|v4| ip.segments()[..6] == [0; 6] && refused_v4(v4))
}

/// The IP of `url`'s host when it is an IP literal that [`refused`].
pub fn refused_host(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    let ip: IpAddr = host.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
    refused(ip).then_some(ip)
}

/// `url` if an endpoint may have it: absolute `https` (or `http` when
/// `allow_private`), with a host, no credentials, and (unless
/// `allow_private`) not an IP literal in a refused range; else why not.
pub fn check_url(url: &str, allow_private: bool) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|e| format!("url is not an absolute URL: {e}"))?;
    match parsed.scheme() {
        "https" => {}
        "http" if allow_private => {}
        s => return Err(format!("url must be https (not {s})")),
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("url has no host".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("url may not carry credentials".into());
    }
    match refused_host(&parsed) {
        Some(ip) if !allow_private => Err(format!("url points to {ip}, an address webhooks may not reach")),
        _ => Ok(parsed),
    }
}

/// A resolver that drops the addresses a delivery may not reach, and
/// fails when none is left.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = all.iter().copied().filter(|a| !refused(a.ip())).collect();
            if allowed.is_empty() {
                let e: Box<dyn std::error::Error + Send + Sync> =
                    format!("{host} resolves only to addresses webhooks may not reach").into();
                return Err(e);
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_internal_range() {
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(refused(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(!refused(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn urls_must_be_https_and_public_unless_allowed() {
        assert!(check_url("https://hooks.example.com/x", false).is_ok());
        for bad in [
            "http://hooks.example.com/",
            "https://127.0.0.1/",
            "https://10.0.0.1/",
            "https://[::1]/",
            "https://169.254.169.254/latest",
            "ftp://x.example/",
            "not a url",
            "https://user:pw@x.example/",
        ] {
            assert!(check_url(bad, false).is_err(), "{bad}");
        }
        assert!(check_url("http://127.0.0.1:8080/", true).is_ok());
    }
}
