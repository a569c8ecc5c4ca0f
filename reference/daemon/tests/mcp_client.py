"""Drives `vxref mcp` with the official MCP Python SDK (`pip install mcp`), a client
nobody in this project wrote. Run by tests/mcp_python.rs against a daemon it started:

    VXREF_BIN=<vxref> VENOMX_SOCKET=<socket> VENOMX_TOKEN=@owner python3 tests/mcp_client.py

The SDK validates every successful result's structuredContent against the tool's
outputSchema (and raises when it does not conform), so each call below also checks
that the schema generated from the manifest's result shorthand is the daemon's truth.
Exit status 0 and a last line `mcp client: N checks passed` when all holds.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CHECKS = 0
# Tools that answered ok at least once: each such result was checked by the SDK
# against the tool's output schema.
ANSWERED = set()


def check(cond, what):
    global CHECKS
    if not cond:
        raise AssertionError(what)
    CHECKS += 1


def server_params(token, socket=None):
    env = {
        "VENOMX_SOCKET": socket or os.environ["VENOMX_SOCKET"],
        "VENOMX_TOKEN": token,
    }
    for key in ("HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    return StdioServerParameters(command=os.environ["VXREF_BIN"], args=["mcp"], env=env)


class Client:
    def __init__(self, session):
        self.session = session

    async def ok(self, tool, args=None):
        """A call that must succeed; the SDK has validated it against outputSchema."""
        r = await self.session.call_tool(tool, args or {})
        check(not r.is_error, f"{tool} failed: {r.structured_content}")
        text = r.content[0].text
        check(json.loads(text) == r.structured_content, f"{tool}: text is the JSON of the result")
        ANSWERED.add(tool)
        return r.structured_content

    async def error(self, tool, args):
        """A call that must fail; returns its error object."""
        r = await self.session.call_tool(tool, args)
        check(r.is_error, f"{tool} should have failed: {r.structured_content}")
        err = r.structured_content["error"]
        check(set(err) == {"code", "message", "data"}, f"{tool}: error object {err}")
        check(json.loads(r.content[0].text) == r.structured_content, f"{tool}: error text")
        return err


async def check_tools(session):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in ("session.list", "recovery.list", "pane.create", "server.info", "doctor"):
        check(name in tools, f"tool {name} listed")
    for name in ("pane.attach", "events.subscribe"):
        check(name not in tools, f"streaming verb {name} is no tool")
    for name, tool in tools.items():
        s = tool.input_schema
        check(s.get("type") == "object" and s.get("additionalProperties") is False, f"{name} input schema")
        check(tool.output_schema and tool.output_schema.get("type") == "object", f"{name} output schema")
        check(tool.description, f"{name} has a description")
    create = tools["pane.create"].input_schema
    check(set(create["required"]) == {"window", "argv"}, "pane.create requires window and argv")
    check(create["properties"]["cols"]["type"] == "integer", "pane.create cols is an integer")
    out = tools["recovery.list"].output_schema
    check(out["required"] == ["checkpoints"], "recovery.list output lists checkpoints")
    return tools


async def topology(c):
    """Every answered topology, pane and metadata verb once, through its tool."""
    info = await c.ok("server.info")
    check(info["protocol"] is not None and "source" in info, "server.info")
    who = await c.ok("auth.whoami")
    check(who["principal"] == "owner", "logged in as the owner")
    session = (await c.ok("session.create", {"name": "mcp"}))["session"]
    await c.ok("session.rename", {"session": session, "name": "mcp2"})
    window = (await c.ok("window.create", {"session": session, "name": "w", "cols": 80, "rows": 24}))["window"]
    await c.ok("window.rename", {"window": window, "name": "w2"})
    argv = ["/bin/sh", "-c", "exec cat"]
    first = await c.ok("pane.create", {"window": window, "argv": argv})
    second = await c.ok("pane.split", {"pane": first["pane"], "axis": "cols", "argv": argv})
    await c.ok("window.resize", {"window": window, "cols": 100, "rows": 30})
    await c.ok("window.ratio", {"window": window, "node": 0, "ratio": 3000})
    await c.ok("pane.place", {"pane": second["pane"], "target": first["pane"], "axis": "rows"})
    float_pane = await c.ok("pane.float", {"window": window, "argv": argv, "width": "20", "height": "5"})
    await c.ok("pane.resize", {"pane": float_pane["pane"], "cols": 30})
    await c.ok("pane.send", {"pane": first["pane"], "text": "hello\n"})
    await c.ok("pane.tag", {"pane": first["pane"], "key": "role", "value": "test"})
    await c.ok("meta.set", {"pane": first["pane"], "key": "note", "value": "v"})
    got = await c.ok("meta.get", {"pane": first["pane"], "key": "note"})
    check(got["value"] == "v", "meta.get reads meta.set")
    await c.ok("meta.delete", {"pane": first["pane"], "key": "note"})
    capture = await c.ok("pane.capture", {"pane": first["pane"]})
    check(capture["pane"] == first["pane"], "pane.capture")
    panes = (await c.ok("pane.list"))["panes"]
    check({p["pane"] for p in panes} == {first["pane"], second["pane"], float_pane["pane"]}, "pane.list")
    sessions = (await c.ok("session.list"))["sessions"]
    check([s["session"] for s in sessions] == [session], "session.list has the session")
    check(sessions[0]["windows"][0]["window"] == window, "session.list has the window")
    await c.ok("pane.kill", {"pane": float_pane["pane"]})
    return session, window, first["pane"]


async def owner_checks(session):
    c = Client(session)
    tools = await check_tools(session)
    session_id, window, pane = await topology(c)

    await c.ok("config.get")
    key = await c.ok("config.get", {"key": "recovery.enabled"})
    check(key["value"] is True, "config.get one key")
    await c.ok("config.check")
    await c.ok("config.set", {"key": "recovery.interval_ms", "value": 3600000})
    await c.ok("config.reload")
    integrations = await c.ok("integration.list")
    ids = [i["integration_id"] for i in integrations["integrations"]]
    check(ids == ["stub"], f"the test's plugin: {integrations}")
    await c.ok("doctor")
    agents = (await c.ok("session.create", {"name": "agents"}))["session"]
    agent_window = (await c.ok("window.create", {"session": agents, "name": "a"}))["window"]
    err = await c.error("agent.launch", {"window": agent_window, "integration": "nope"})
    check(err["code"] == "not_found.integration", f"unknown integration: {err}")
    launched = await c.ok("agent.launch", {"window": agent_window, "integration": "stub"})
    check(launched["window"] == agent_window, "agent.launch starts the window's pane")
    await c.ok("session.kill", {"session": agents})
    with open(os.environ["VENOMX_SOCKET"] + ".owner") as f:
        login = await c.ok("auth.login", {"token": f.read().strip()})
    check(login["principal"] == "owner", "auth.login")

    checkpoint = (await c.ok("recovery.checkpoint"))["checkpoint"]
    listed = (await c.ok("recovery.list"))["checkpoints"]
    check(checkpoint in [row["checkpoint"] for row in listed], "recovery.list has the checkpoint")
    inspect = await c.ok("recovery.inspect", {"checkpoint": checkpoint})
    check(inspect["sessions"] == 1, "recovery.inspect counts the session")

    # Typed errors: a missing resource, a refused state, and argument errors caught
    # before the daemon, each with the daemon's code and no echo of what was sent.
    err = await c.error("pane.capture", {"pane": "p999999"})
    check(err["code"] == "not_found.pane", f"missing pane: {err}")
    err = await c.error("pane.send", {"pane": "p999999", "text": "SECRET-TEXT-42"})
    check(err["code"] == "not_found.pane" and "SECRET" not in json.dumps(err), f"no echo: {err}")
    err = await c.error("recovery.restore", {"checkpoint": checkpoint})
    check(err["code"] == "conflict.not_empty", f"restore into a busy daemon: {err}")
    err = await c.error("session.create", {})
    check(err["code"] == "invalid_params.name" and err["data"]["param"] == "name", f"missing: {err}")
    err = await c.error("window.create", {"session": session_id, "name": "x", "cols": "wide"})
    check(err["code"] == "invalid_params.cols", f"wrong type: {err}")
    err = await c.error("session.list", {"verbose": True})
    check(err["code"] == "invalid_params.unknown_param", f"unknown param: {err}")
    err = await c.error("recovery.inspect", {"checkpoint": "../../etc/passwd"})
    check(err["code"] == "invalid_params.checkpoint" and "passwd" not in json.dumps(err), f"bad id: {err}")
    try:
        await session.call_tool("no.such.tool", {})
        check(False, "an unknown tool is a protocol error")
    except Exception as e:  # the SDK raises McpError for a JSON-RPC error
        check("no.such.tool" not in str(e), "the unknown tool's name is not echoed")

    issued = await c.ok("grant.issue", {"grants": [f"read@session:{session_id}"]})
    await reader_checks(issued["token"])
    await c.ok("grant.revoke", {"principal": issued["principal"]})
    # Restore needs an empty daemon: kill the session, restore the checkpoint as
    # archives, relaunch one of them.
    await c.ok("window.kill", {"window": window})
    await c.ok("session.kill", {"session": session_id})
    restored = await c.ok("recovery.restore", {"checkpoint": checkpoint})
    mapped = {row["previous"]: row["current"] for row in restored["panes"]}
    check(pane in mapped, "the restore maps the pane")
    err = await c.error("pane.relaunch", {"pane": mapped[pane], "argv": ["/bin/cat"], "ack_orphans": False})
    check(err["code"] == "invalid_params.ack_orphans", f"relaunch needs the ack: {err}")
    relaunched = await c.ok("pane.relaunch", {"pane": mapped[pane], "argv": ["/bin/cat"], "ack_orphans": True})
    check(relaunched["pane"] != mapped[pane], "relaunch gives a fresh pane id")
    second = (await c.ok("recovery.checkpoint"))["checkpoint"]
    await c.ok("recovery.forget", {"checkpoint": checkpoint})
    listed = [row["checkpoint"] for row in (await c.ok("recovery.list"))["checkpoints"]]
    check(checkpoint not in listed and second in listed, "recovery.forget removed one checkpoint")
    unanswered = sorted(set(tools) - ANSWERED)
    check(not unanswered, f"every tool's output schema met a real answer; not: {unanswered}")
    return len(tools)


async def reader_checks(token):
    """An issued read-only principal: denied is a typed tool error."""
    async with stdio_client(server_params(token)) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=30) as session:
            await session.initialize()
            c = Client(session)
            err = await c.error("session.create", {"name": "nope"})
            check(err["code"] == "denied.write", f"read-only principal: {err}")
            err = await c.error("recovery.list", {})
            check(err["code"] == "denied.admin", f"read-only principal: {err}")


async def no_daemon_checks():
    """Argument errors are refused before any connection: with no daemon at the socket,
    a bad call is still invalid_params and a good one is unavailable.daemon."""
    missing = os.environ["VENOMX_SOCKET"] + ".none"
    async with stdio_client(server_params("", missing)) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=30) as session:
            await session.initialize()
            c = Client(session)
            err = await c.error("session.create", {"name": 7})
            check(err["code"] == "invalid_params.name", f"checked before the daemon: {err}")
            err = await c.error("session.list", {})
            check(err["code"] == "unavailable.daemon", f"no daemon: {err}")


async def main():
    with anyio.fail_after(120):
        async with stdio_client(server_params(os.environ.get("VENOMX_TOKEN", ""))) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=30) as session:
                init = await session.initialize()
                check(init.server_info.name == "vxref", "server identifies as vxref")
                tools = await owner_checks(session)
        await no_daemon_checks()
    print(f"mcp client: {tools} tools listed")
    print(f"mcp client: {CHECKS} checks passed")


if __name__ == "__main__":
    try:
        anyio.run(main)
    except* AssertionError as group:
        # The SDK's task groups nest the failure; print the checks that failed.
        def leaves(e):
            if isinstance(e, BaseExceptionGroup):
                for inner in e.exceptions:
                    yield from leaves(inner)
            else:
                yield e

        for e in leaves(group):
            print(f"mcp client: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
