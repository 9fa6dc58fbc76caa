/**
 * The served half of the MCP example (examples/mcp-serve), driven by a real MCP client we did not write: the
 * MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0). It lists the tools, resources and prompts,
 * calls a tool, and completes an approval the only way a client that cannot answer elicitation can: the
 * refused call gives the pending token id, an operator approves it (`agent.approvals`), and the CLI calls
 * again with `--tool-arg _approval_token=<id>` — the booking runs once, and the token cannot run it twice.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Agent } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { Effect } from "effect"
import { booked, DeskRole, prompts, resources } from "../examples/mcp-serve/role.ts"

const inspector = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js", import.meta.url)
)

/** One Inspector CLI run against `url`; its JSON answer (it exits non-zero for an `isError` result). */
const inspect = (url: string, ...args: ReadonlyArray<string>) =>
  Effect.callback<Record<string, any>, Error>((resume) => {
    execFile(
      process.execPath,
      [inspector, "--cli", url, "--transport", "http", ...args],
      { timeout: 120_000 },
      (error, stdout) => {
        const start = stdout.indexOf("{")
        const end = stdout.lastIndexOf("\n}")
        if (start < 0 || end < start) {
          resume(Effect.fail(new Error(`the Inspector CLI answered no JSON: ${stdout} ${String(error)}`)))
          return
        }
        resume(Effect.succeed(JSON.parse(stdout.slice(start, end + 2))))
      }
    )
  })

describe("examples/mcp-serve with the MCP Inspector CLI", () => {
  it.live(
    "lists, calls, and completes an approval: refused with the pending token id, approved, run once",
    () =>
      Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "desk", roles: [DeskRole] })
        const served = yield* Mcp.serve(agent, { transport: { http: {} }, resources, prompts })
        const url = served.url ?? ""

        const listed = yield* inspect(url, "--method", "tools/list")
        assert.deepStrictEqual(
          listed.tools.map((tool: { name: string }) => tool.name),
          ["quote", "floorPlan", "book"]
        )
        const resourcesListed = yield* inspect(url, "--method", "resources/list")
        assert.isTrue(resourcesListed.resources.some((r: { uri: string }) => r.uri.endsWith("refunds.md")))
        const prompt = yield* inspect(
          url,
          "--method",
          "prompts/get",
          "--prompt-name",
          "plan_stay",
          "--prompt-args",
          "hotel=pousada-sol"
        )
        assert.include(prompt.messages[0].content.text, "pousada-sol")

        const quoted = yield* inspect(
          url,
          "--method",
          "tools/call",
          "--tool-name",
          "quote",
          "--tool-arg",
          "hotel=casa-alfama",
          "--tool-arg",
          "nights=2"
        )
        assert.deepStrictEqual(quoted.structuredContent, {
          hotel: "casa-alfama",
          nights: 2,
          total: 190,
          currency: "EUR"
        })

        const book = [
          "--method",
          "tools/call",
          "--tool-name",
          "book",
          "--tool-arg",
          "hotel=casa-alfama",
          "--tool-arg",
          "nights=2"
        ]
        const refused = yield* inspect(url, ...book)
        assert.isTrue(refused.isError)
        const id = refused.structuredContent.error.pendingTokenId as string
        assert.isString(id)
        assert.include(refused.content[0].text, id)
        assert.deepStrictEqual(booked, [])

        yield* agent.approvals.approve(id, "operator")
        const done = yield* inspect(url, ...book, "--tool-arg", `_approval_token=${id}`)
        assert.isUndefined(done.isError)
        assert.strictEqual(done.content[0].text, "booked casa-alfama for 2 nights")
        const twice = yield* inspect(url, ...book, "--tool-arg", `_approval_token=${id}`)
        assert.strictEqual(twice.structuredContent.error.check, "used")
        assert.deepStrictEqual(booked, ["casa-alfama x2"])
      }).pipe(Effect.scoped),
    300_000
  )
})
