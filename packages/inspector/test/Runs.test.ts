/**
 * What the inspector makes of spans: a turn is an outermost `invoke_agent`; its tree holds every span below
 * it once, each one level under its parent, in start order, with its agents' path; tokens are the turn's own
 * total or its model calls' sum; a failed turn says its category; tool results before a pending call are its
 * turn's, up to the call. Property-tested over random span forests (fast-check), whatever order they arrive in.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Runs from "../src/Runs.ts"
import type * as Traces from "../src/Traces.ts"

const span = (
  id: string,
  parent: string | undefined,
  name: string,
  start: number,
  end: number,
  attributes: Record<string, unknown> = {},
  statusCode = 1
): Traces.Span => ({
  traceId: "t".repeat(32),
  spanId: id,
  parentSpanId: parent,
  name,
  kind: 1,
  startTimeUnixNano: BigInt(start) * 1_000_000n,
  endTimeUnixNano: BigInt(end) * 1_000_000n,
  attributes,
  statusCode,
  statusMessage: undefined,
  service: "app",
  events: []
})

const turnOf = (id: string, parent: string | undefined, agent: string, start: number, end: number, extra = {}) =>
  span(id, parent, `invoke_agent ${agent}`, start, end, {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": agent,
    ...extra
  })

const chat = (id: string, parent: string, start: number, input: number, output: number, extra = {}) =>
  span(id, parent, "chat m", start, start + 1, {
    "gen_ai.operation.name": "chat",
    "gen_ai.usage.input_tokens": input,
    "gen_ai.usage.output_tokens": output,
    ...extra
  })

const tool = (id: string, parent: string, name: string, start: number, end: number, result?: string) =>
  span(id, parent, `execute_tool ${name}`, start, end, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    ...(result === undefined ? {} : { "gen_ai.tool.call.result": result })
  })

describe("Runs", () => {
  it("a nested agent's turn is part of its caller's, with its path; tokens are summed when the turn has none", () => {
    const spans = [
      turnOf("a", "app", "lead", 0, 100, { "rolecraft.turn.id": "turn-1", "rolecraft.agent.path": ["lead"] }),
      chat("b", "a", 1, 10, 2, { "gen_ai.usage.cache_read.input_tokens": 4 }),
      tool("c", "a", "scout", 5, 50),
      turnOf("d", "c", "scout", 6, 49, { "rolecraft.agent.path": ["lead", "scout"] }),
      chat("e", "d", 7, 5, 1, { "gen_ai.usage.reasoning.output_tokens": 3 }),
      span("app", undefined, "request", 0, 120)
    ]
    const [turn, ...others] = Runs.turns(spans)
    assert.deepStrictEqual(others, [])
    assert.deepStrictEqual(
      turn && [turn.agent, turn.turnId, turn.status, turn.modelCalls, turn.toolCalls, turn.tokens],
      ["lead", "turn-1", "Ok", 2, 1, { input: 15, output: 3, cached: 4, reasoning: 3 }]
    )
    const nodes = Runs.tree(spans, "t".repeat(32), "a")
    assert.deepStrictEqual(
      nodes.map((node) => [node.name, node.depth, node.path.join("/")]),
      [
        ["invoke_agent lead", 0, "lead"],
        ["chat m", 1, "lead"],
        ["execute_tool scout", 1, "lead"],
        ["invoke_agent scout", 2, "lead/scout"],
        ["chat m", 3, "lead/scout"]
      ]
    )
  })

  it("a failed turn says its category; a turn's own token total wins over its calls'", () => {
    const spans = [
      span(
        "a",
        undefined,
        "invoke_agent lead",
        0,
        10,
        {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": "lead",
          "rolecraft.category": "TRANSIENT",
          "gen_ai.usage.input_tokens": 99,
          "gen_ai.usage.output_tokens": 1
        },
        2
      ),
      chat("b", "a", 1, 10, 2)
    ]
    const [turn] = Runs.turns(spans)
    assert.deepStrictEqual(turn && [turn.status, turn.category, turn.tokens.input], ["Failed", "TRANSIENT", 99])
  })

  it("the tool results before a pending call are its turn's, up to the call, nested agents' included", () => {
    const spans = [
      turnOf("a", undefined, "lead", 0, 100, { "rolecraft.turn.id": "turn-1" }),
      tool("b", "a", "lookup", 1, 5, "the note"),
      tool("c", "a", "scout", 6, 20),
      turnOf("d", "c", "scout", 7, 19, { "rolecraft.turn.id": "turn-1.scout" }),
      tool("e", "d", "weather", 8, 9, "sunny"),
      tool("f", "a", "late", 40, 50, "after the call"),
      turnOf("x", undefined, "other", 0, 100, { "rolecraft.turn.id": "turn-2" }),
      tool("y", "x", "lookup", 1, 2, "another turn's")
    ]
    assert.deepStrictEqual(
      Runs.toolResultsBefore(spans, "turn-1", 30).map((result) => [result.tool, result.result]),
      [
        ["lookup", "the note"],
        ["weather", "sunny"]
      ]
    )
    // Asked by the nested turn's id: the whole outer turn is what the model chain had seen.
    assert.strictEqual(Runs.toolResultsBefore(spans, "turn-1.scout", 30).length, 2)
    assert.deepStrictEqual(Runs.toolResultsBefore(spans, "turn-3", 30), [])
  })

  it("property: every span below a turn is in its tree once, one level under its parent, whatever the order", () => {
    // A random forest: span i's parent is one of the spans before it (or none); some are agent turns.
    const forest = fc
      .array(fc.record({ parent: fc.nat(), root: fc.boolean(), agent: fc.boolean(), start: fc.nat(1_000) }), {
        minLength: 1,
        maxLength: 40
      })
      .map((entries) =>
        entries.map((entry, i) => {
          const parent = i === 0 || entry.root ? undefined : `s${entry.parent % i}`
          return i === 0 || entry.agent
            ? turnOf(`s${i}`, parent, `agent${i}`, entry.start, entry.start + 10)
            : span(`s${i}`, parent, `work${i}`, entry.start, entry.start + 5)
        })
      )
    fc.assert(
      fc.property(forest, fc.infiniteStream(fc.nat()), (spans, order) => {
        const shuffled = [...spans].sort(() => (order.next().value % 3) - 1)
        const turns = Runs.turns(shuffled)
        const byId = new Map(spans.map((s) => [s.spanId, s]))
        const seen = new Set<string>()
        for (const turn of turns) {
          const nodes = Runs.tree(shuffled, turn.traceId, turn.spanId)
          const depth = new Map(nodes.map((node) => [node.spanId, node.depth]))
          for (const node of nodes) {
            assert.isFalse(seen.has(node.spanId), "a span is in one turn's tree only")
            seen.add(node.spanId)
            if (node.spanId === turn.spanId) assert.strictEqual(node.depth, 0)
            else assert.strictEqual(node.depth, (depth.get(node.parentSpanId ?? "") ?? -99) + 1)
          }
        }
        // Every span under some invoke_agent is in a tree.
        for (const s of spans) {
          let under = false
          for (let at: Traces.Span | undefined = s; at !== undefined; at = byId.get(at.parentSpanId ?? "")) {
            if (at.name.startsWith("invoke_agent ")) under = true
          }
          assert.strictEqual(seen.has(s.spanId), under, s.spanId)
        }
      }),
      { numRuns: 200 }
    )
  })
})
