//! `vxref mcp`: a Model Context Protocol server on stdio (the `rmcp` SDK) whose tools
//! are the manifest's answered verbs ([`schema::tool_verbs`]): adding a verb to
//! [`crate::manifest::VERBS`] adds its tool.
//!
//! A call is checked against the verb's params by the daemon's own shape check
//! ([`crate::reactor::params::check_shape`]) before anything is sent, so a schema
//! violation is the `invalid_params.*` error the daemon would give. Then it runs as
//! the CLI runs a verb: one new connection, `auth.login` with `$VENOMX_TOKEN`, one
//! request ([`client::call`]). One connection per call rather than one for the
//! session: the owner token is read again each call (it changes with every daemon
//! start), a daemon restarted between calls is simply found again, and a call that
//! makes the daemon close its connection (`denied.token`) costs no later call
//! anything; a connect and a login per call is nothing beside a model's turn.
//!
//! The `ok` object is the result's `structuredContent` (and its text, as JSON); a
//! daemon or client error is a tool error (`isError`) whose `structuredContent` is
//! `{"error": {"code","message","data"}}`, as `vxref --json` prints it. Standard
//! output is the protocol's; nothing else is written there.

pub mod schema;

use crate::errors::{ApiError, ErrorCode};
use crate::{client, paths};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

const INSTRUCTIONS: &str = "Tools are the verbs of a venomx reference daemon (vxref), one \
     request each, authenticated with the server's $VENOMX_TOKEN. A failed call is a tool \
     error whose structured content is {\"error\":{\"code\",\"message\",\"data\"}}; the code \
     (`not_found.pane`, `denied.write`, `invalid_params.<param>`, …) is the daemon's.";

/// The server: the tools, built once, and where the daemon is.
pub struct VerbServer {
    tools: Vec<Tool>,
    /// `None` when no socket path can be chosen; each call then fails `unavailable.daemon`.
    socket: Option<PathBuf>,
}

impl VerbServer {
    /// The socket as the CLI picks it: `--socket`, `$VENOMX_SOCKET`, the default path.
    pub fn new(socket_flag: Option<&Path>) -> VerbServer {
        VerbServer {
            tools: schema::tool_verbs().map(schema::tool).collect(),
            socket: paths::select_socket(socket_flag).ok(),
        }
    }

    /// Runs `verb` with `arguments` (already a tool's verb); `Err` is the wire's error object.
    async fn run(
        &self,
        verb: &'static crate::manifest::Verb,
        arguments: Map<String, Value>,
    ) -> Result<Value, Value> {
        crate::reactor::params::check_shape(verb, &arguments).map_err(|e| e.to_json())?;
        let socket = self.socket.clone().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Daemon,
                "no socket path: give --socket, VENOMX_SOCKET or XDG_RUNTIME_DIR",
            )
            .to_json()
        })?;
        // The CLI's blocking client, off the protocol's thread.
        tokio::task::spawn_blocking(move || {
            let token = client::token_from_env(&socket).map_err(|e| e.to_json())?;
            client::call(&socket, token.as_deref(), verb.name, arguments)
        })
        .await
        .unwrap_or_else(|_| Err(ApiError::internal().to_json()))
    }
}

impl ServerHandler for VerbServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("vxref", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // An unknown tool is a protocol error (MCP); its name is the caller's text and
        // is not echoed.
        let verb = schema::tool_verbs()
            .find(|v| v.name == request.name)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    "unknown tool",
                    Some(json!({"code": ErrorCode::UnknownVerb.as_str()})),
                )
            })?;
        let result = match self.run(verb, request.arguments.unwrap_or_default()).await {
            Ok(ok) => CallToolResult::structured(ok),
            Err(error) => CallToolResult::structured_error(json!({ "error": error })),
        };
        Ok(result.into())
    }
}

/// `vxref mcp`: serves until the client closes standard input; returns the exit code.
pub fn serve(socket_flag: Option<&Path>) -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => {
            eprintln!("vxref mcp: cannot start the async runtime");
            return 1;
        }
    };
    let server = VerbServer::new(socket_flag);
    let outcome = runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|_| "the client's initialization failed")?;
        running
            .waiting()
            .await
            .map_err(|_| "the server task failed")
    });
    match outcome {
        Ok(_) => 0,
        Err(why) => {
            eprintln!("vxref mcp: {why}");
            1
        }
    }
}
