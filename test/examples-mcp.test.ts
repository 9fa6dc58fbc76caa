import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
// The sources, not dist/: a test never runs a stale build.
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples (MCP)", () => {
  it("mcp-tools.ts: a currencyTools-style mcpTool action runs server-everything's tools through the agent", async () => {
    const { stdout } = await node("examples/mcp-tools.ts")
    assert.include(stdout, 'echo -> "Echo: bonjour"')
    assert.include(stdout, 'get-sum -> "The sum of 120.5 and 79.5 is 200."')
    assert.match(stdout, /get-tiny-image -> \[\{"type":"text",.*"text":"\[image image\/png, 4 KB\]"\}/)
    assert.include(
      stdout,
      "get-env -> NOT_FOUND: currencyTools: the MCP server has no tool named get-env that this action allows; available: echo, get-sum, get-tiny-image"
    )
  })
})
