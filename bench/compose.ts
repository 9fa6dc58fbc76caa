/**
 * Agents made of agents against the fastest alternative that has both features, OpenAI Agents JS (its chat
 * scenarios are 10–24× faster than LangChain.js's LangGraph-based agent in the chat section, and LangGraph's own
 * handoffs and agents-as-tools live in the supervisor and swarm packages): the same mocked model, answering at once.
 *
 * - A handoff turn: the triage agent's model calls the handoff tool, the billing agent's model answers (two model
 *   calls). Rolecraft `Compose.handoff` and `agent.chat`; Agents JS `handoffs: [billing]` and `run`.
 * - An agent-as-action turn: the lead's model calls the research agent as a tool, the research agent's model
 *   answers, the lead's model answers with it (three model calls). Rolecraft `Compose.agent`; Agents JS
 *   `research.asTool()`.
 *
 * Each run checks that the right agent answered with the right text (a wrong answer rejects the measurement).
 * Both frameworks run in this process, interleaved in 3 rounds; a ratio is read per round.
 *
 * Target (issue 25): each Rolecraft turn ≤ 0.3× the alternative's time, in every round.
 *
 * Run: node bench/compose.ts
 */
import {
  Agent as OaAgent,
  type Model,
  type ModelResponse as OaModelResponse,
  run,
  setTracingDisabled,
  Usage
} from "@openai/agents"
import { Agent, type Chat, Compose, LanguageModel, type ModelResponse, type Prompt, Role } from "@rolecraft/core"
import { Effect, ManagedRuntime, Scope } from "effect"
import { compareAsync, defaultRounds, type Figures, type Options } from "./measure.ts"
import { isMain, printSection, type Section, type Table, times, us } from "./report.ts"

setTracingDisabled(true)

const answer = "Your invoice is due on the 5th."
const found = "The Avenida, 140 a night."
const final = "Stay at the Avenida: 140 a night."
const usage = { inputTokens: 10, outputTokens: 5 }

const plan: Options = { warmup: 200, warmupMs: 500, samples: 1000, batch: 1, budgetMs: 800, minSamples: 30 }

// ---------------------------------------------------------------------------
// Rolecraft: one model for every agent, answering by the agent its system message names.
// ---------------------------------------------------------------------------

const agentOf = (messages: ReadonlyArray<Prompt.Message>): string => {
  const system = messages[0]
  return system?.role === "system" ? (/You are the agent "([^"]+)"/.exec(system.content)?.[1] ?? "") : ""
}

const reply = (messages: ReadonlyArray<Prompt.Message>): ModelResponse.ProviderResponse => {
  const text = (value: string): ModelResponse.ProviderResponse => ({
    text: value,
    toolCalls: [],
    usage,
    finishReason: "stop"
  })
  const call = (name: string, args: string): ModelResponse.ProviderResponse => ({
    text: "",
    toolCalls: [{ id: "call_1", name, arguments: args }],
    usage,
    finishReason: "tool_calls"
  })
  switch (agentOf(messages)) {
    case "triage":
      return call("transfer_to_billing", "{}")
    case "billing":
      return text(answer)
    case "research":
      return text(found)
    default:
      return messages.some((message) => message.role === "tool")
        ? text(final)
        : call("research", '{"input":"a hotel in Lisbon"}')
  }
}

const desk = (name: string) => Role.make({ identity: { name, goal: `Answer as ${name}`, domain: "bench" } })

const rolecraft = async () => {
  const runtime = ManagedRuntime.make(LanguageModel.layer((call) => reply(call.request.messages), { name: "bench" }))
  const scope = Effect.runSync(Scope.make())
  const agents = await runtime.runPromise(
    Effect.gen(function* () {
      const billing = yield* Agent.make({ id: "billing", roles: [desk("billing")] })
      const triage = yield* Agent.make({
        id: "triage",
        roles: [
          Role.make({
            identity: { name: "triage", goal: "Route", domain: "bench" },
            actions: { transfer_to_billing: Compose.handoff(billing) }
          })
        ]
      })
      const research = yield* Agent.make({ id: "research", roles: [desk("research")] })
      const lead = yield* Agent.make({
        id: "lead",
        roles: [
          Role.make({
            identity: { name: "lead", goal: "Delegate", domain: "bench" },
            actions: { research: Compose.agent(research, { description: "Research a question" }) }
          })
        ]
      })
      return { triage, lead }
    }).pipe(Scope.provide(scope))
  )
  const check = (result: Chat.ChatResult, text: string, agent: string | undefined) => {
    if (result._tag !== "Completed" || result.text !== text || result.agent !== agent) {
      throw new Error(`Rolecraft: unexpected result ${JSON.stringify(result).slice(0, 300)}`)
    }
  }
  return {
    handoff: async () =>
      check(await runtime.runPromise(agents.triage.chat("When is my invoice due?")), answer, "billing"),
    asAction: async () => check(await runtime.runPromise(agents.lead.chat("Where should I stay?")), final, undefined),
    dispose: async () => {
      await Effect.runPromise(Scope.close(scope, undefined as never))
      await runtime.dispose()
    }
  }
}

// ---------------------------------------------------------------------------
// OpenAI Agents JS: one fake model per agent, at the SDK's model boundary.
// ---------------------------------------------------------------------------

const oaUsage = () => new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
const oaText = (text: string): OaModelResponse => ({
  usage: oaUsage(),
  output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }]
})
const oaCall = (name: string, args: string): OaModelResponse => ({
  usage: oaUsage(),
  output: [{ type: "function_call", callId: "call_1", name, arguments: args, status: "completed" }]
})
const fake = (respond: (request: Parameters<Model["getResponse"]>[0]) => OaModelResponse): Model => ({
  getResponse: async (request) => respond(request),
  getStreamedResponse: () => {
    throw new Error("not streamed in this bench")
  }
})
const hasResult = (request: Parameters<Model["getResponse"]>[0]) =>
  typeof request.input !== "string" && request.input.some((item) => item.type === "function_call_result")

const openaiAgents = () => {
  const billing = new OaAgent({ name: "billing", instructions: "Answer as billing", model: fake(() => oaText(answer)) })
  const triage = new OaAgent({
    name: "triage",
    instructions: "Route",
    model: fake(() => oaCall("transfer_to_billing", "{}")),
    handoffs: [billing]
  })
  const research = new OaAgent({
    name: "research",
    instructions: "Answer as research",
    model: fake(() => oaText(found))
  })
  const lead = new OaAgent({
    name: "lead",
    instructions: "Delegate",
    model: fake((request) =>
      hasResult(request) ? oaText(final) : oaCall("research", '{"input":"a hotel in Lisbon"}')
    ),
    tools: [research.asTool({ toolName: "research", toolDescription: "Research a question" })]
  })
  return {
    handoff: async () => {
      const result = await run(triage, "When is my invoice due?", { maxTurns: 4 })
      if (result.finalOutput !== answer || result.lastAgent?.name !== "billing") {
        throw new Error(`OpenAI Agents JS: unexpected handoff result ${String(result.finalOutput)}`)
      }
    },
    asAction: async () => {
      const result = await run(lead, "Where should I stay?", { maxTurns: 4 })
      if (result.finalOutput !== final)
        throw new Error(`OpenAI Agents JS: unexpected result ${String(result.finalOutput)}`)
    }
  }
}

// ---------------------------------------------------------------------------

interface Row {
  readonly scenario: string
  readonly ours: Figures
  readonly theirs: Figures
  readonly ratios: ReadonlyArray<number>
}

const rowOf = (scenario: string, [ours, theirs]: ReadonlyArray<Figures>): Row => {
  if (ours === undefined || theirs === undefined) throw new Error(`${scenario}: nothing measured`)
  return { scenario, ours, theirs, ratios: ours.rounds.map((median, i) => median / (theirs.rounds[i] ?? Number.NaN)) }
}

export const bench = async (): Promise<Section> => {
  const ours = await rolecraft()
  const theirs = openaiAgents()
  const options = { ...plan, rounds: defaultRounds }
  const rows = [
    rowOf(
      "handoff turn (2 model calls)",
      await compareAsync(
        [
          { name: "Rolecraft", call: ours.handoff },
          { name: "OpenAI Agents JS", call: theirs.handoff }
        ],
        options
      )
    ),
    rowOf(
      "agent-as-action turn (3 model calls)",
      await compareAsync(
        [
          { name: "Rolecraft", call: ours.asAction },
          { name: "OpenAI Agents JS", call: theirs.asAction }
        ],
        options
      )
    )
  ]
  await ours.dispose()
  const table: Table = {
    title: "One turn, mocked model answering at once",
    columns: ["scenario", "framework", "median µs", "p95 µs", "samples", "round medians µs", "ratio per round"],
    rows: rows.flatMap((row) => [
      [
        row.scenario,
        "Rolecraft",
        us(row.ours.medianUs),
        us(row.ours.p95Us),
        String(row.ours.samples),
        row.ours.rounds.map(us).join(", "),
        row.ratios.map(times).join(", ")
      ],
      [
        row.scenario,
        "OpenAI Agents JS",
        us(row.theirs.medianUs),
        us(row.theirs.p95Us),
        String(row.theirs.samples),
        row.theirs.rounds.map(us).join(", "),
        ""
      ]
    ])
  }
  return {
    title: "Agents made of agents",
    description:
      "A handoff turn (Rolecraft `Compose.handoff`, OpenAI Agents JS `handoffs`) and an agent-as-action turn " +
      "(Rolecraft `Compose.agent`, OpenAI Agents JS `agent.asTool()`) over the same mocked model answering at once, " +
      `each run checked (the right agent, the right text). Both run in one process, interleaved in ${defaultRounds} ` +
      "rounds; the ratio is Rolecraft's median over the alternative's, per round. OpenAI Agents JS is the fastest " +
      "alternative with both features (see the chat section; LangGraph.js's handoffs and agents-as-tools are in its " +
      "supervisor and swarm packages, not measured here).",
    tables: [table],
    targets: rows.map((row) => ({
      name: `${row.scenario} vs OpenAI Agents JS`,
      limit: "≤ 0.3× in every round",
      measured: `${us(row.ours.medianUs)} µs vs ${us(row.theirs.medianUs)} µs = ${times(row.ours.medianUs / row.theirs.medianUs)} (rounds ${row.ratios.map(times).join(", ")})`,
      met: row.ratios.every((ratio) => ratio <= 0.3)
    })),
    notes: [
      "A Rolecraft agent used as an action runs a whole chat turn of the inner agent (its own system message, " +
        "toolkit and pipeline), as Agents JS's asTool runs a whole run of its agent."
    ]
  }
}

if (isMain(import.meta)) await printSection(bench)
