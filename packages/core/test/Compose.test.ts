/**
 * Agents as actions and handoffs (issue 25 items 1–2) on the scripted model, one model shared by every agent
 * (its script is the calls in the order they happen). Each failure kind the peers' users reported is a test:
 *
 * - an approval inside an agent used as a tool never reaches the top-level run (openai-agents-js#243);
 * - the inner call is approved but never resumed, the outer run just ends (openai-agents-js#680);
 * - the approval is attributed to the outer agent after the state is serialised and restored (PR #996);
 * - two- and three-level nesting, the protected tool run exactly once (openai-agents-python PR #4414);
 * - the inner pause is swallowed into a generic tool error and its state lost (sagents-ai/sagents#7);
 * - a rejection of a nested call never resumes the inner agent (a failure kind of the same family);
 * - unbounded recursion of agents calling agents.
 */
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import { assert, describe, it } from "@effect/vitest"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Layer, Schema, Stream } from "effect"
import * as Action from "../src/Action.ts"
import * as Agent from "../src/Agent.ts"
import * as Chat from "../src/Chat.ts"
import * as Compose from "../src/Compose.ts"
import type * as LanguageModel from "../src/LanguageModel.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as Role from "../src/Role.ts"

function expectTag<T extends Chat.ChatResult["_tag"]>(
  result: Chat.ChatResult,
  tag: T
): asserts result is Extract<Chat.ChatResult, { readonly _tag: T }> {
  assert.strictEqual(result._tag, tag, JSON.stringify(result))
}

const toolMessages = (messages: ReadonlyArray<Prompt.Message>) =>
  messages.flatMap((message) => (message.role === "tool" ? [[message.toolCallId, message.content]] : []))

const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } })

/** The innermost agent: `book` needs an approval and counts its runs. */
const booker = (counts: { book: number }) =>
  Role.make({
    identity: { name: "booker", goal: "Book hotels", domain: "travel" },
    actions: {
      book: Action.local({
        description: "Book a hotel",
        parameters: { hotel: Schema.String },
        run: ({ hotel }) => {
          counts.book++
          return `booked ${hotel}`
        }
      }).pipe(Action.requireApproval({ reason: "Bookings cost money" }))
    }
  })

/** An agent whose one action is another agent. */
const delegating = (
  id: string,
  action: string,
  inner: Compose.AgentRef,
  options: Partial<Compose.AgentOptions<any, any>> = {}
) =>
  Agent.make({
    id,
    roles: [
      Role.make({
        identity: { name: id, goal: `Delegate to ${action}`, domain: "travel" },
        actions: { [action]: Compose.agent(inner, { description: `Ask ${action}`, ...options }) }
      })
    ]
  })

/** lead → researcher → book (approval). */
const twoLevels = Effect.gen(function* () {
  const counts = { book: 0 }
  const researcher = yield* Agent.make({ id: "researcher", roles: [booker(counts)] })
  const lead = yield* delegating("lead", "research", researcher)
  return { counts, researcher, lead }
})

/** The script of a two-level turn up to the inner pause, and after an approval. */
const pausingScript = [
  ScriptedModel.toolCalls([{ name: "research", arguments: { input: "Book the Ritz" } }], usage(10, 2)),
  ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "Ritz" } }], usage(20, 3))
]
const approvedScript = [
  ScriptedModel.reply("Booked the Ritz.", usage(30, 4)),
  ScriptedModel.reply("Done: the Ritz is booked.", usage(40, 5))
]

describe("Compose.agent: an agent as an action", () => {
  it.effect("a call runs one turn of the inner agent; its answer is the result; usage adds up per agent", () =>
    Effect.gen(function* () {
      const counts = { book: 0 }
      const researcher = yield* Agent.make({ id: "researcher", roles: [booker(counts)] })
      const lead = yield* delegating("lead", "research", researcher, {
        parameters: { city: Schema.String },
        prompt: ({ city }: { city: string }) => `Find a hotel in ${city}`,
        output: Schema.Struct({ hotel: Schema.String, stars: Schema.Int })
      })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "research", arguments: { city: "Lisbon" } }], usage(10, 2)),
        ScriptedModel.reply('{"hotel":"Avenida","stars":"5"}', usage(20, 3)),
        ScriptedModel.reply("The Avenida, five stars.", usage(40, 5))
      ])
      const result = yield* lead.chat("Where should I stay in Lisbon?").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.text, "The Avenida, five stars.")
      // typed output through structured output: the inner answer decoded ("5" converted to 5)
      assert.deepStrictEqual(toolMessages(result.messages), [["call_1", '{"hotel":"Avenida","stars":5}']])
      const requests = yield* scripted.requests
      assert.deepStrictEqual(requests[1]?.messages.at(-1), { role: "user", content: "Find a hotel in Lisbon" })
      assert.strictEqual(requests[1]?.responseFormat?.name, "output")
      assert.deepStrictEqual(result.usage, { inputTokens: 70, outputTokens: 10, totalTokens: 80 })
      assert.deepStrictEqual(result.agents, {
        researcher: { inputTokens: 20, outputTokens: 3, totalTokens: 23 },
        lead: { inputTokens: 50, outputTokens: 7, totalTokens: 57 }
      })
      yield* scripted.assertDone
    })
  )

  it.effect("#243, sagents#7: an inner approval pauses the outer turn with the path; no error reaches the model", () =>
    Effect.gen(function* () {
      const { counts, lead } = yield* twoLevels
      const scripted = yield* ScriptedModel.make(pausingScript)
      const paused = yield* lead.chat("Book the Ritz").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      assert.deepStrictEqual(
        paused.pending.map(({ pendingTokenId: _token, ...call }) => call),
        [
          {
            toolCallId: "call_1/call_2",
            action: "book",
            arguments: { hotel: "Ritz" },
            reason: "Bookings cost money",
            agents: ["lead", "researcher"]
          }
        ]
      )
      assert.strictEqual(counts.book, 0)
      // the outer model was not called again, and no tool message answers the research call yet
      assert.strictEqual((yield* scripted.requests).length, 2)
      assert.deepStrictEqual(toolMessages(paused.state.messages), [])
      assert.deepStrictEqual(
        paused.state.nested?.map((nested) => [nested.toolCallId, nested.action, nested.agent]),
        [["call_1", "research", "researcher"]]
      )
      yield* scripted.assertDone
    })
  )

  it.effect(
    "#680, #996: approving resumes the inner turn where it paused, after a JSON round trip; the tool runs once",
    () =>
      Effect.gen(function* () {
        const { counts, lead, researcher } = yield* twoLevels
        const scripted = yield* ScriptedModel.make([...pausingScript, ...approvedScript])
        const paused = yield* lead.chat("Book the Ritz").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        const state = JSON.parse(JSON.stringify(paused.state)) as Chat.PausedState
        const result = yield* lead
          .resume(state, { "call_1/call_2": Chat.approve("ann") })
          .pipe(Effect.provide(scripted.layer))
        expectTag(result, "Completed")
        assert.strictEqual(result.text, "Done: the Ritz is booked.")
        assert.deepStrictEqual(toolMessages(result.messages), [["call_1", "Booked the Ritz."]])
        assert.strictEqual(counts.book, 1)
        // the token is the inner agent's, bound to its call, approved by ann and used
        const token = yield* researcher.approvals.get(paused.pending[0]?.pendingTokenId ?? "")
        assert.strictEqual(token._tag, "Some")
        if (token._tag === "Some") {
          assert.deepStrictEqual(
            [token.value.status, token.value.approver, token.value.binding.agentId],
            ["used", "ann", "researcher"]
          )
        }
        // the inner turn saw the approved call's answer before answering
        const requests = yield* scripted.requests
        assert.deepStrictEqual(toolMessages(requests[2]?.messages ?? []), [["call_2", "booked Ritz"]])
        assert.deepStrictEqual(result.usage, { inputTokens: 100, outputTokens: 14, totalTokens: 114 })
        assert.deepStrictEqual(result.agents, {
          researcher: { inputTokens: 50, outputTokens: 7, totalTokens: 57 },
          lead: { inputTokens: 50, outputTokens: 7, totalTokens: 57 }
        })
        yield* scripted.assertDone

        // resumed again with the same decision: the protected tool does not run twice
        const again = yield* ScriptedModel.make([
          ScriptedModel.reply("It was already booked."),
          ScriptedModel.reply("Nothing more to do.")
        ])
        const twice = yield* lead
          .resume(state, { "call_1/call_2": Chat.approve("ann") })
          .pipe(Effect.provide(again.layer))
        expectTag(twice, "Completed")
        assert.strictEqual(counts.book, 1)
        const inner = yield* again.requests
        assert.match(toolMessages(inner[0]?.messages ?? [])[0]?.[1] ?? "", /APPROVAL/)

        // another decision on a call decided once: refused whole, before anything runs
        const none = yield* ScriptedModel.make([])
        const refused = yield* lead
          .resume(state, { "call_1/call_2": Chat.reject("bob", "too dear") })
          .pipe(Effect.provide(none.layer), Effect.flip)
        assert.strictEqual(refused.category, "APPROVAL")
        assert.match(refused.message, /call_1\/call_2 \(book\) is already decided: approved by ann/)
        assert.strictEqual(counts.book, 1)
        assert.strictEqual((yield* none.requests).length, 0)
      })
  )

  it.effect("a rejection resumes the inner turn too: its model is told, the outer turn completes, nothing books", () =>
    Effect.gen(function* () {
      const { counts, lead } = yield* twoLevels
      const scripted = yield* ScriptedModel.make([
        ...pausingScript,
        ScriptedModel.reply("The booking was refused."),
        ScriptedModel.reply("I could not book it.")
      ])
      const paused = yield* lead.chat("Book the Ritz").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const result = yield* lead
        .resume(paused.state, { "call_1/call_2": Chat.reject("bob", "too dear") })
        .pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.text, "I could not book it.")
      assert.strictEqual(counts.book, 0)
      const requests = yield* scripted.requests
      assert.match(toolMessages(requests[2]?.messages ?? [])[0]?.[1] ?? "", /rejected by bob: too dear/)
      yield* scripted.assertDone
    })
  )

  it.effect("decisions must match the nested pending calls one to one (VALIDATION)", () =>
    Effect.gen(function* () {
      const { counts, lead } = yield* twoLevels
      const scripted = yield* ScriptedModel.make(pausingScript)
      const paused = yield* lead.chat("Book the Ritz").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const wrong = yield* lead
        .resume(paused.state, { call_2: Chat.approve("ann") })
        .pipe(Effect.provide(scripted.layer), Effect.flip)
      assert.strictEqual(wrong.category, "VALIDATION")
      assert.match(wrong.message, /no decision for call_1\/call_2; no pending call call_2/)
      assert.strictEqual(counts.book, 0)
    })
  )

  it.effect("#4414: three levels — the path, the id, one decision, the protected tool run exactly once", () =>
    Effect.gen(function* () {
      const counts = { book: 0 }
      const clerk = yield* Agent.make({ id: "clerk", roles: [booker(counts)] })
      const planner = yield* delegating("planner", "reserve", clerk)
      const lead = yield* delegating("lead", "plan", planner)
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "plan", arguments: { input: "a hotel" } }]),
        ScriptedModel.toolCalls([{ name: "reserve", arguments: { input: "the Ritz" } }]),
        ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "Ritz" } }]),
        ScriptedModel.reply("clerk: booked"),
        ScriptedModel.reply("planner: booked"),
        ScriptedModel.reply("lead: booked")
      ])
      const paused = yield* lead.chat("Plan my stay").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      const [pending] = paused.pending
      assert.strictEqual(pending?.toolCallId, "call_1/call_2/call_3")
      assert.deepStrictEqual(pending?.agents, ["lead", "planner", "clerk"])
      assert.strictEqual(counts.book, 0)
      const result = yield* lead
        .resume(JSON.parse(JSON.stringify(paused.state)) as Chat.PausedState, {
          "call_1/call_2/call_3": Chat.approve("ann")
        })
        .pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.text, "lead: booked")
      assert.deepStrictEqual(toolMessages(result.messages), [["call_1", "planner: booked"]])
      assert.strictEqual(counts.book, 1)
      yield* scripted.assertDone
      const again = yield* lead
        .resume(paused.state, { "call_1/call_2/call_3": Chat.reject("bob", "no") })
        .pipe(Effect.provide(scripted.layer), Effect.flip)
      assert.strictEqual(again.category, "APPROVAL")
      assert.strictEqual(counts.book, 1)
    })
  )

  it.effect("a streamed turn carries the inner agent's events tagged with the path, then the call's result", () =>
    Effect.gen(function* () {
      const { lead } = yield* twoLevels
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "research", arguments: { input: "Lisbon?" } }]),
        ScriptedModel.reply("Try the Avenida."),
        ScriptedModel.reply("The Avenida.")
      ])
      const events = yield* lead.chatStream("Where in Lisbon?").pipe(Stream.runCollect, Effect.provide(scripted.layer))
      const inner = events.flatMap((event) => (event._tag === "NestedEvent" ? [event] : []))
      assert.isTrue(inner.length > 0)
      for (const event of inner) {
        assert.deepStrictEqual(event.agents, ["lead", "researcher"])
        assert.strictEqual(event.toolCallId, "call_1")
      }
      const text = inner.flatMap((event) => (event.event._tag === "TextDelta" ? [event.event.delta] : [])).join("")
      assert.strictEqual(text, "Try the Avenida.")
      assert.strictEqual(inner.at(-1)?.event._tag, "TurnFinished")
      // the inner events come between the call being ready and its result
      const tags = events.map((event) => event._tag)
      const ready = tags.indexOf("ToolCallReady")
      const answered = tags.indexOf("ToolCallAnswered")
      assert.isTrue(ready < tags.indexOf("NestedEvent") && tags.lastIndexOf("NestedEvent") < answered)
      const last = events.at(-1)
      assert.strictEqual(last?._tag, "TurnFinished")
    })
  )

  it.effect("a streamed three-level pause: the deepest events carry the whole path and the joined call id", () =>
    Effect.gen(function* () {
      const counts = { book: 0 }
      const clerk = yield* Agent.make({ id: "clerk", roles: [booker(counts)] })
      const planner = yield* delegating("planner", "reserve", clerk)
      const lead = yield* delegating("lead", "plan", planner)
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "plan", arguments: { input: "a hotel" } }]),
        ScriptedModel.toolCalls([{ name: "reserve", arguments: { input: "the Ritz" } }]),
        ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "Ritz" } }])
      ])
      const events = yield* lead.chatStream("Plan my stay").pipe(Stream.runCollect, Effect.provide(scripted.layer))
      const deepest = events.flatMap((event) =>
        event._tag === "NestedEvent" && event.event._tag === "ApprovalRequested" ? [event] : []
      )
      assert.deepStrictEqual(
        deepest.map((event) => [event.agents, event.toolCallId]),
        [
          [["lead", "planner", "clerk"], "call_1/call_2"],
          [["lead", "planner"], "call_1"]
        ]
      )
      const finished = events.at(-1)
      assert.strictEqual(finished?._tag, "TurnFinished")
      if (finished?._tag === "TurnFinished") expectTag(finished.result, "AwaitingApproval")
    })
  )

  it.effect("recursion is bounded by depth: past maxDepth the call is EXECUTION naming the path of agents", () =>
    Effect.gen(function* () {
      let self: Agent.Agent<any, LanguageModel.LanguageModel> | undefined
      const echo = yield* Agent.make({
        id: "echo",
        roles: [
          Role.make({
            identity: { name: "echo", goal: "Ask yourself", domain: "loops" },
            actions: {
              ask: Compose.agent(() => self as Agent.Agent<any, LanguageModel.LanguageModel>, {
                description: "Ask echo",
                maxDepth: 2
              })
            }
          })
        ]
      })
      self = echo
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "ask", arguments: { input: "1" } }]),
        ScriptedModel.toolCalls([{ name: "ask", arguments: { input: "2" } }]),
        ScriptedModel.toolCalls([{ name: "ask", arguments: { input: "3" } }]),
        ScriptedModel.reply("depth 2 gives up"),
        ScriptedModel.reply("depth 1 done"),
        ScriptedModel.reply("top done")
      ])
      const result = yield* echo.chat("go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const requests = yield* scripted.requests
      const refusal = JSON.parse(toolMessages(requests[3]?.messages ?? [])[0]?.[1] ?? "null")
      assert.deepStrictEqual(refusal, {
        error: {
          category: "EXECUTION",
          message: "ask: the agents echo > echo > echo > echo are nested 3 deep, over the bound (maxDepth 2)"
        }
      })
      yield* scripted.assertDone
    })
  )

  it.effect("recursion is bounded by total steps across nested turns (maxTotalSteps)", () =>
    Effect.gen(function* () {
      let self: Agent.Agent<any, LanguageModel.LanguageModel> | undefined
      const echo = yield* Agent.make({
        id: "echo",
        roles: [
          Role.make({
            identity: { name: "echo", goal: "Ask yourself", domain: "loops" },
            actions: {
              ask: Compose.agent(() => self as Agent.Agent<any, LanguageModel.LanguageModel>, {
                description: "Ask echo",
                maxDepth: 10,
                maxTotalSteps: 2
              })
            }
          })
        ]
      })
      self = echo
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "ask", arguments: { input: "1" } }]), // top: model call 1 of the tree
        ScriptedModel.toolCalls([{ name: "ask", arguments: { input: "2" } }]) // nested: model call 2, the bound
      ])
      // The outermost turn's calls count: nothing past the bound is made, and the turn ends with a result.
      const result = yield* echo.chat("go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "StepLimitReached")
      const requests = yield* scripted.requests
      assert.strictEqual(requests.length, 2)
      const refusal = JSON.parse(toolMessages(result.messages)[0]?.[1] ?? "null")
      assert.strictEqual(refusal.error.category, "EXECUTION")
      assert.include(refusal.error.message, "the turns of the tree made 2 model calls, its bound (maxTotalSteps 2)")
      assert.include(refusal.error.message, "model calls by agent: echo 1, echo > echo 1")
    })
  )

  it.effect("the call goes through the caller's pipeline: its own approval first, then the inner turn", () =>
    Effect.gen(function* () {
      const counts = { book: 0 }
      const researcher = yield* Agent.make({ id: "researcher", roles: [booker(counts)] })
      const lead = yield* Agent.make({
        id: "lead",
        roles: [
          Role.make({
            identity: { name: "lead", goal: "Delegate", domain: "travel" },
            actions: {
              research: Compose.agent(researcher, { description: "Ask researcher" }).pipe(
                Action.requireApproval({ reason: "Research costs tokens" })
              )
            }
          })
        ]
      })
      const scripted = yield* ScriptedModel.make([...pausingScript, ...approvedScript])
      const first = yield* lead.chat("Book the Ritz").pipe(Effect.provide(scripted.layer))
      expectTag(first, "AwaitingApproval")
      assert.deepStrictEqual(
        first.pending.map((call) => [call.toolCallId, call.action, call.agents]),
        [["call_1", "research", undefined]]
      )
      const second = yield* lead
        .resume(first.state, { call_1: Chat.approve("ann") })
        .pipe(Effect.provide(scripted.layer))
      expectTag(second, "AwaitingApproval")
      assert.deepStrictEqual(
        second.pending.map((call) => [call.toolCallId, call.action, call.agents]),
        [["call_1/call_2", "book", ["lead", "researcher"]]]
      )
      // the outer call's own approval was used once; resuming the inner one goes on at the run step
      const done = yield* lead
        .resume(second.state, { "call_1/call_2": Chat.approve("ann") })
        .pipe(Effect.provide(scripted.layer))
      expectTag(done, "Completed")
      assert.strictEqual(counts.book, 1)
      yield* scripted.assertDone
    })
  )

  it.effect("the caller's authority decides: a denied agent action is never offered nor run", () =>
    Effect.gen(function* () {
      const counts = { book: 0 }
      const researcher = yield* Agent.make({ id: "researcher", roles: [booker(counts)] })
      const role = Role.make({
        identity: { name: "lead", goal: "Delegate", domain: "travel" },
        actions: { research: Compose.agent(researcher, { description: "Ask researcher" }) }
      })
      const lead = yield* Agent.make({ id: "lead", roles: [role], authority: { deny: ["research"] } })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "research", arguments: { input: "x" } }]),
        ScriptedModel.reply("ok")
      ])
      const result = yield* lead.chat("go").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      const requests = yield* scripted.requests
      assert.deepStrictEqual(requests[0]?.tools ?? [], [])
      assert.match(toolMessages(result.messages)[0]?.[1] ?? "", /AUTHORITY/)
    })
  )

  it.effect("spans nest: invoke_agent of the inner agent inside the call's execute_tool inside the outer turn", () =>
    Effect.gen(function* () {
      const exporter = new InMemorySpanExporter()
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
      const tracing = OtelTracer.layer.pipe(Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, provider)))
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "research", arguments: { input: "Lisbon?" } }], usage(10, 2)),
        ScriptedModel.reply("Try the Avenida.", usage(20, 3)),
        ScriptedModel.reply("The Avenida.", usage(40, 5))
      ])
      yield* Effect.gen(function* () {
        const { lead } = yield* twoLevels
        expectTag(yield* lead.chat("Where in Lisbon?"), "Completed")
      }).pipe(Effect.scoped, Effect.provide([scripted.layer, tracing]))
      const spans = exporter.getFinishedSpans()
      const named = (name: string) => spans.filter((span) => span.name === name)
      const [outer] = named("invoke_agent lead")
      const [tool] = named("execute_tool research")
      const [inner] = named("invoke_agent researcher")
      assert.isDefined(outer)
      assert.isDefined(tool)
      assert.isDefined(inner)
      assert.strictEqual(tool?.parentSpanContext?.spanId, outer?.spanContext().spanId)
      assert.strictEqual(inner?.parentSpanContext?.spanId, tool?.spanContext().spanId)
      assert.strictEqual(inner?.attributes["gen_ai.usage.input_tokens"], 20)
      assert.strictEqual(outer?.attributes["gen_ai.usage.input_tokens"], 70)
      const innerChats = spans.filter((span) => span.parentSpanContext?.spanId === inner?.spanContext().spanId)
      assert.deepStrictEqual(
        innerChats.map((span) => span.name.split(" ")[0]),
        ["chat"]
      )
    })
  )
})

/** A triage agent with handoffs to billing and support, which answer. */
const desks = Effect.gen(function* () {
  const billing = yield* Agent.make({
    id: "billing",
    roles: [Role.make({ identity: { name: "billing", goal: "Answer billing questions", domain: "billing" } })]
  })
  const support = yield* Agent.make({
    id: "support",
    roles: [Role.make({ identity: { name: "support", goal: "Fix problems", domain: "support" } })]
  })
  const role = Role.make({
    identity: { name: "triage", goal: "Send each customer to the right desk", domain: "support" },
    actions: {
      transfer_to_billing: Compose.handoff(billing, { filter: Compose.withoutTools }),
      transfer_to_support: Compose.handoff(support)
    }
  })
  return { billing, support, role }
})

describe("Compose.handoff", () => {
  it.effect("the model calls a handoff: the next agent answers on the filtered history; the result names it", () =>
    Effect.gen(function* () {
      const { role } = yield* desks
      const triage = yield* Agent.make({ id: "triage", roles: [role] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "transfer_to_billing", arguments: {} }], usage(10, 1)),
        ScriptedModel.reply("Your invoice is due on the 5th.", usage(30, 6))
      ])
      const result = yield* triage.chat("When is my invoice due?").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.agent, "billing")
      assert.strictEqual(result.text, "Your invoice is due on the 5th.")
      assert.deepStrictEqual(result.usage, { inputTokens: 40, outputTokens: 7, totalTokens: 47 })
      assert.deepStrictEqual(result.agents, {
        triage: { inputTokens: 10, outputTokens: 1, totalTokens: 11 },
        billing: { inputTokens: 30, outputTokens: 6, totalTokens: 36 }
      })
      const requests = yield* scripted.requests
      // billing sees its own system message and the user's words, not the transfer call (withoutTools)
      assert.deepStrictEqual(
        requests[1]?.messages.map((message) => message.role),
        ["system", "user"]
      )
      assert.match(String(requests[1]?.messages[0]?.content), /You are the agent "billing"/)
      yield* scripted.assertDone
    })
  )

  it.effect("the whole history by default: the next agent sees the transfer call and its answer", () =>
    Effect.gen(function* () {
      const { role } = yield* desks
      const triage = yield* Agent.make({ id: "triage", roles: [role] })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "transfer_to_support", arguments: {} }]),
        ScriptedModel.reply("Restart the router.")
      ])
      const result = yield* triage.chat("My internet is down").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.agent, "support")
      const requests = yield* scripted.requests
      assert.deepStrictEqual(
        requests[1]?.messages.map((message) => message.role),
        ["system", "user", "assistant", "tool"]
      )
      assert.deepStrictEqual(toolMessages(requests[1]?.messages ?? []), [["call_1", "Transferred to support."]])
      // the result's conversation is the caller's: its own messages up to the handoff, then the next agent's answer
      assert.deepStrictEqual(
        result.messages.map((message) => message.role),
        ["system", "user", "assistant", "tool", "assistant"]
      )
      assert.match(String(result.messages[0]?.content), /You are the agent "triage"/)
    })
  )

  it.effect(
    "two handoffs to one agent: each call runs its own handoff, with its own filter, and resumes under it",
    () =>
      Effect.gen(function* () {
        const clerk = yield* Agent.make({
          id: "clerk",
          roles: [
            Role.make({
              identity: { name: "clerk", goal: "File claims", domain: "support" },
              actions: {
                file: Action.local({ description: "File a claim", parameters: {}, run: () => "filed" }).pipe(
                  Action.requireApproval({ reason: "Files a claim" })
                )
              }
            })
          ]
        })
        const role = Role.make({
          identity: { name: "triage", goal: "Send each customer to the right desk", domain: "support" },
          actions: {
            to_clerk_with_history: Compose.handoff(clerk),
            to_clerk_quietly: Compose.handoff(clerk, { filter: Compose.withoutTools })
          }
        })
        const triage = yield* Agent.make({ id: "triage", roles: [role] })
        const scripted = yield* ScriptedModel.make([
          ScriptedModel.toolCalls([{ name: "to_clerk_quietly", arguments: {} }]),
          ScriptedModel.toolCalls([{ name: "file", arguments: {} }]),
          ScriptedModel.reply("Filed.")
        ])
        const paused = yield* triage.chat("File a claim").pipe(Effect.provide(scripted.layer))
        expectTag(paused, "AwaitingApproval")
        // The handoff the call ran, named in the paused state; the clerk saw no tool call (the quiet one's filter).
        assert.strictEqual(paused.state.handoff?.action, "to_clerk_quietly")
        const requests = yield* scripted.requests
        assert.deepStrictEqual(
          requests[1]?.messages.map((message) => message.role),
          ["system", "user"]
        )
        const [pending] = paused.pending
        const done = yield* triage
          .resume(paused.state, { [pending?.toolCallId ?? ""]: Chat.approve("ann") })
          .pipe(Effect.provide(scripted.layer))
        expectTag(done, "Completed")
        assert.deepStrictEqual([done.text, done.agent], ["Filed.", "clerk"])
        yield* scripted.assertDone
      })
  )

  it.effect("authority decides which handoffs a role may make: a denied one is refused and nothing transfers", () =>
    Effect.gen(function* () {
      const { role } = yield* desks
      const triage = yield* Agent.make({ id: "triage", roles: [role], authority: { deny: ["transfer_to_billing"] } })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "transfer_to_billing", arguments: {} }]),
        ScriptedModel.reply("I cannot transfer you.")
      ])
      const result = yield* triage.chat("Billing please").pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.agent, undefined)
      assert.strictEqual(result.text, "I cannot transfer you.")
      assert.deepStrictEqual(
        (yield* scripted.requests)[0]?.tools?.map((tool) => tool.name),
        ["transfer_to_support"]
      )
      assert.match(toolMessages(result.messages)[0]?.[1] ?? "", /AUTHORITY/)
    })
  )

  it.effect("a handoff target that needs an approval pauses the turn; resuming the first agent resumes it", () =>
    Effect.gen(function* () {
      const counts = { book: 0 }
      const clerk = yield* Agent.make({ id: "clerk", roles: [booker(counts)] })
      const front = yield* Agent.make({
        id: "front",
        roles: [
          Role.make({
            identity: { name: "front", goal: "Route", domain: "travel" },
            actions: { transfer_to_clerk: Compose.handoff(clerk) }
          })
        ]
      })
      const scripted = yield* ScriptedModel.make([
        ScriptedModel.toolCalls([{ name: "transfer_to_clerk", arguments: {} }]),
        ScriptedModel.toolCalls([{ name: "book", arguments: { hotel: "Ritz" } }]),
        ScriptedModel.reply("Booked.")
      ])
      const paused = yield* front.chat("Book the Ritz").pipe(Effect.provide(scripted.layer))
      expectTag(paused, "AwaitingApproval")
      assert.deepStrictEqual(paused.state.handoff?.agent, "clerk")
      const result = yield* front
        .resume(JSON.parse(JSON.stringify(paused.state)) as Chat.PausedState, {
          [paused.pending[0]?.toolCallId ?? ""]: Chat.approve("ann")
        })
        .pipe(Effect.provide(scripted.layer))
      expectTag(result, "Completed")
      assert.strictEqual(result.agent, "clerk")
      assert.strictEqual(counts.book, 1)
      yield* scripted.assertDone
    })
  )

  it.effect("handoffs that go round are bounded: past maxDepth the handoff is answered as not carried out", () =>
    Effect.gen(function* () {
      let ping: Agent.Agent<any, LanguageModel.LanguageModel> | undefined
      const pong = yield* Agent.make({
        id: "pong",
        roles: [
          Role.make({
            identity: { name: "pong", goal: "Bounce", domain: "loops" },
            actions: { back: Compose.handoff(() => ping as Agent.Agent<any, LanguageModel.LanguageModel>) }
          })
        ]
      })
      ping = yield* Agent.make({
        id: "ping",
        roles: [
          Role.make({
            identity: { name: "ping", goal: "Bounce", domain: "loops" },
            actions: { over: Compose.handoff(pong) }
          })
        ]
      })
      const bounce = (name: string) => ScriptedModel.toolCalls([{ name, arguments: {} }])
      const scripted = yield* ScriptedModel.make([
        bounce("over"),
        bounce("back"),
        bounce("over"),
        bounce("back"),
        bounce("over"),
        ScriptedModel.reply("ping stays")
      ])
      const events = yield* (ping as Agent.Agent<any, LanguageModel.LanguageModel>)
        .chatStream("go")
        .pipe(Stream.runCollect, Effect.provide(scripted.layer))
      const finished = events.at(-1)
      assert.strictEqual(finished?._tag, "TurnFinished")
      if (finished?._tag !== "TurnFinished") return
      expectTag(finished.result, "Completed")
      assert.strictEqual(finished.result.agent, "ping")
      // The fifth handoff would go 5 deep: its call is answered as not carried out, and no HandedOff is told for it.
      const note =
        "Not transferred to pong: the handoffs ping > pong > ping > pong > ping > pong would go 5 deep, over the bound (maxDepth 4)."
      const last = toolMessages(finished.result.messages).at(-1)
      assert.strictEqual(last?.[1], note)
      const handedOff = events.flatMap((event) => {
        const inner = event._tag === "NestedEvent" ? event.event : event
        return inner._tag === "HandedOff" ? [inner.to] : []
      })
      assert.deepStrictEqual(handedOff, ["pong", "ping", "pong", "ping"])
    })
  )
})
