//! Tools for language-model agents: the Model Context Protocol (contract
//! section 12), written once for both transports.
//!
//! # Layout
//! - [`jsonrpc`]: the JSON-RPC 2.0 messages: one incoming message read
//!   ([`jsonrpc::Incoming`]), answers and errors written.
//! - [`tools`]: the nine tools ([`tools::TOOLS`]), each standing for a
//!   route of the route table: its input schema taken from the route's
//!   parameters in the OpenAPI document, its arguments turned into the
//!   route's request, the route's answer turned into the tool's result.
//! - [`arguments`]: a call's arguments checked against the tool's input
//!   schema before any route is called.
//! - [`text`]: a result's compact text content (pages and price series as tables).
//! - [`session`]: the protocol (`initialize`, `ping`, `tools/list`,
//!   `tools/call`, notifications) over an [`session::Upstream`] that makes
//!   a route's `GET` request; [`session::handle`] answers one message.
//!
//! The transports: `POST /mcp` on the public listener
//! ([`crate::controllers::mcp`], which makes each tool call's request
//! through the envelope, as a client's request to the route) and `mds mcp`
//! on stdio (the binary, which makes it over HTTP to a running service).

pub mod arguments;
pub mod jsonrpc;
pub mod session;
pub mod text;
pub mod tools;

/// The protocol version spoken (contract section 12).
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The versions a client may name in `MCP-Protocol-Version` (the HTTP
/// transport's header): ours, and the one a client that sends none is
/// assumed to speak. Answers are the same for both.
pub const ACCEPTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION, "2025-03-26"];
