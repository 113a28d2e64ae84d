//! Which addresses a delivery may reach (contract 11.2, "SSRF", and
//! 11.5): never loopback, private, shared (CGNAT), link-local (the cloud
//! metadata address among them), multicast, broadcast, unspecified or
//! reserved ones, in IPv4 or IPv6, nor an IPv6 address that embeds a
//! refused IPv4 one (IPv4-mapped or -compatible, NAT64 `64:ff9b::/96`,
//! 6to4 `2002::/16`); never `localhost` or a name under `.localhost`
//! (RFC 6761), whatever they resolve to. Checked on the URL at creation and
//! at every change of it ([`check_url`], then [`check_resolved`]: a name
//! that resolves only to refused addresses, such as `127.0.0.1.nip.io` or
//! `metadata.google.internal` in a cloud, is refused; one that does not
//! resolve yet is accepted), and on every attempt: [`check_url`] again,
//! then at connect time the client resolves names with
//! [`GuardedResolver`], which drops refused addresses after resolving, so
//! a name that resolves differently later is checked again.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

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
        || embedded_v4(ip).is_some_and(refused_v4)
}

/// The IPv4 address an IPv6 one stands for, where it embeds one: the last
/// 32 bits of an IPv4-compatible `::a.b.c.d` or a NAT64 `64:ff9b::/96`
/// address, bits 16 to 48 of a 6to4 `2002::/16` one. (`::1` and `::` are
/// IPv6's own loopback and unspecified addresses, refused as such.)
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match s {
        [0, 0, 0, 0, 0, 0, ..] if !ip.is_loopback() && !ip.is_unspecified() => Some(last),
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => Some(last),
        [0x2002, ..] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

/// Whether `host` (a URL's host, lowercase) is `localhost` or a name under
/// it (RFC 6761: such names are the loopback's, whatever a resolver says).
fn is_localhost(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    host == "localhost" || host.ends_with(".localhost")
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
    if allow_private {
        return Ok(parsed);
    }
    if let Some(ip) = refused_host(&parsed) {
        return Err(format!("url points to {ip}, an address webhooks may not reach"));
    }
    match parsed.host_str() {
        Some(host) if is_localhost(host) => {
            Err(format!("url's host {host} is the loopback's, which webhooks may not reach"))
        }
        _ => Ok(parsed),
    }
}

/// How long a check of a new URL waits for its name to resolve: one that
/// has not in that time is accepted, as one that does not resolve yet is.
const RESOLVE_TIME: Duration = Duration::from_secs(2);

/// Refuses `url` (checked by [`check_url`]) when its host is a name that
/// `lookup` resolves to addresses every one of which is [`refused`]; a
/// name that does not resolve (yet, or in [`RESOLVE_TIME`]) is accepted,
/// and checked at every attempt. An IP-literal host was checked already.
pub async fn check_resolved<F, Fut>(url: &Url, lookup: F) -> Result<(), String>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = std::io::Result<Vec<IpAddr>>>,
{
    let Some(host) = url.host_str() else { return Ok(()) };
    if host.starts_with('[') || host.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    match tokio::time::timeout(RESOLVE_TIME, lookup(host.to_owned())).await {
        Ok(Ok(ips)) if !ips.is_empty() && ips.iter().all(|ip| refused(*ip)) => {
            Err(format!("url's host {host} resolves only to addresses webhooks may not reach"))
        }
        _ => Ok(()),
    }
}

/// The system's resolver (the one deliveries use): the addresses of
/// `name`.
pub async fn system_lookup(name: String) -> std::io::Result<Vec<IpAddr>> {
    Ok(tokio::net::lookup_host((name.as_str(), 0)).await?.map(|a| a.ip()).collect())
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
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::10.1.2.3",
            "2002:7f00:1::",
            "2002:c0a8:0101::1",
            "2002:a9fe:a9fe:1:2:3:4:5",
        ] {
            assert!(refused(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
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
            "https://localhost/",
            "https://LocalHost./x",
            "https://foo.localhost/",
            "https://a.b.localhost:8443/",
            "https://[64:ff9b::7f00:1]/",
            "https://[2002:7f00:1::]/",
        ] {
            assert!(check_url(bad, false).is_err(), "{bad}");
        }
        assert!(check_url("https://localhost.example.com/", false).is_ok());
        assert!(check_url("https://notlocalhost/", false).is_ok());
        assert!(check_url("http://127.0.0.1:8080/", true).is_ok());
        assert!(check_url("https://foo.localhost/", true).is_ok());
    }

    /// A resolver that answers `ips` (or fails) for any name.
    fn answering(ips: &[&str]) -> impl FnOnce(String) -> std::future::Ready<std::io::Result<Vec<IpAddr>>> + use<> {
        let ips: Vec<IpAddr> = ips.iter().map(|i| i.parse().unwrap()).collect();
        move |_| std::future::ready(Ok(ips))
    }

    /// Names such as `127.0.0.1.nip.io` (which resolves to 127.0.0.1) or
    /// `metadata.google.internal` (169.254.169.254 in Google's cloud) are
    /// refused when every address is; a name that does not resolve, or
    /// has one public address, is accepted.
    #[tokio::test]
    async fn names_resolving_only_to_refused_addresses_are_refused() {
        let url = |u: &str| Url::parse(u).unwrap();
        let nip = url("https://127.0.0.1.nip.io/");
        assert!(check_resolved(&nip, answering(&["127.0.0.1"])).await.is_err());
        let metadata = url("https://metadata.google.internal/computeMetadata/v1/");
        assert!(check_resolved(&metadata, answering(&["169.254.169.254"])).await.is_err());
        assert!(check_resolved(&nip, answering(&["127.0.0.1", "::1", "64:ff9b::a00:1"])).await.is_err());
        assert!(check_resolved(&nip, answering(&["127.0.0.1", "93.184.216.34"])).await.is_ok());
        assert!(check_resolved(&nip, answering(&[])).await.is_ok());
        let unresolved = |_: String| std::future::ready(Err(std::io::Error::other("no such name")));
        assert!(check_resolved(&url("https://not-yet.example/"), unresolved).await.is_ok());
        // An IP literal is check_url's.
        let never = |_: String| async { panic!("an IP literal is not resolved") };
        assert!(check_resolved(&url("https://93.184.216.34/"), never).await.is_ok());
    }
}
