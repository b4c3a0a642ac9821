//! The DNS-rebinding guard: a page on another site whose name is made to resolve to 127.0.0.1
//! reaches the viewer with its own name in `Host`, so only loopback names and addresses (and
//! the address the server is bound to) are answered; anything else gets 403. An IP literal
//! cannot be rebound, so when the server is bound to every interface (0.0.0.0, ::) any IP
//! literal is accepted; names other than `localhost` never are.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Which `Host` headers the server answers.
#[derive(Clone, Copy, Debug)]
pub struct AllowedHosts {
    bound: Option<IpAddr>,
}

impl AllowedHosts {
    /// Loopback names and addresses only (the server as `app` builds it, for tests).
    pub fn loopback() -> Self {
        AllowedHosts { bound: None }
    }

    /// Loopback, and the address the server is bound to.
    pub fn bound_to(ip: IpAddr) -> Self {
        AllowedHosts { bound: Some(ip) }
    }

    /// True when a request with this `Host` value (`name`, `name:port`, `[v6]:port`) is
    /// answered.
    pub fn allows(&self, host: &str) -> bool {
        let name = host_name(host);
        if name.eq_ignore_ascii_case("localhost")
            || name.to_ascii_lowercase().ends_with(".localhost")
        {
            return true;
        }
        let Ok(ip) = name.parse::<IpAddr>() else {
            return false;
        };
        ip.is_loopback() || self.bound.is_some_and(|b| b.is_unspecified() || b == ip)
    }
}

/// The name or address of a `Host` value, without port or IPv6 brackets.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if host.parse::<IpAddr>().is_ok() {
        return host; // an unbracketed IPv6 address: its colons are not a port
    }
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(v6, _)| v6);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Middleware: 403 for a request whose `Host` is not allowed. A request without `Host` (HTTP/1.0,
/// or a test calling the router directly) is answered: a browser always sends one.
pub async fn guard(State(allowed): State<AllowedHosts>, req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST).map(|h| h.to_str());
    match host {
        None => next.run(req).await,
        Some(Ok(h)) if allowed.allows(h) => next.run(req).await,
        Some(_) => (
            StatusCode::FORBIDDEN,
            "pioscope view answers only requests for localhost or its own address\n",
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_the_bound_address_only() {
        let lo = AllowedHosts::loopback();
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "app.localhost:1",
            "127.0.0.1",
            "127.0.0.1:8000",
            "127.1.2.3:9",
            "[::1]:8000",
            "::1",
        ] {
            assert!(lo.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8000",
            "localhost.evil.example",
            "10.0.0.5:8000",
            "",
            "[::2]:80",
        ] {
            assert!(!lo.allows(bad), "{bad}");
        }
        let lan = AllowedHosts::bound_to("10.0.0.5".parse().expect("ip"));
        assert!(lan.allows("10.0.0.5:8000"));
        assert!(!lan.allows("10.0.0.6:8000"));
        assert!(!lan.allows("viewer.example:8000"));
        let any = AllowedHosts::bound_to("0.0.0.0".parse().expect("ip"));
        assert!(any.allows("192.168.1.9:8000"));
        assert!(!any.allows("rebind.example:8000"));
    }
}
