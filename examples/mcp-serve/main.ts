/**
 * A role served over streamable HTTP for any MCP client — here the MCP
 * Inspector CLI — with an operator at this terminal who approves bookings.
 *
 *   node --conditions=@rolecraft/source examples/mcp-serve/main.ts [port]
 *
 * Then, from another terminal:
 *
 *   npx @modelcontextprotocol/inspector --cli http://127.0.0.1:8808/mcp --transport http --method tools/list
 *   npx @modelcontextprotocol/inspector --cli http://127.0.0.1:8808/mcp --transport http \
 *     --method tools/call --tool-name book --tool-arg hotel=casa-alfama --tool-arg nights=2
 *
 * The Inspector CLI cannot answer elicitation, so the booking is refused with
 * a pending token id (in `structuredContent` and the text). Type
 * `approve <id>` here (the operator approves), and call again with
 * `--tool-arg _approval_token=<id>`: the booking runs once. A client that
 * declares elicitation (Claude Desktop, the Inspector's UI) is asked instead.
 */
import { createInterface } from "node:readline"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Agent } from "@rolecraft/core"
import { Mcp } from "@rolecraft/mcp"
import { Console, Effect } from "effect"
import { DeskRole, prompts, resources } from "./role.ts"

const port = Number(process.argv[2] ?? 8808)

const program = Effect.gen(function* () {
  const agent = yield* Agent.make({ id: "desk", roles: [DeskRole] })
  const served = yield* Mcp.serve(agent, { transport: { http: { port } }, resources, prompts })
  yield* Console.log(`MCP server at ${served.url}: ${served.tools.map((tool) => tool.name).join(", ")}`)
  yield* Console.log("Type `approve <token id>` or `reject <token id> <why>` to decide a booking.")
  const lines = createInterface({ input: process.stdin })
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  lines.on("line", (line) => {
    const [verb, id, ...why] = line.trim().split(/\s+/)
    if (id === undefined || (verb !== "approve" && verb !== "reject")) return
    const decided =
      verb === "approve"
        ? agent.approvals.approve(id, "operator")
        : agent.approvals.reject(id, "operator", why.join(" ") || "rejected by the operator")
    void run(
      decided.pipe(
        Effect.andThen(Console.log(`${verb}d ${id}`)),
        Effect.catch((error) => Console.log(`could not ${verb} ${id}: ${error.message}`))
      )
    )
  })
  return yield* Effect.never
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
