import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, Schema } from "effect"
import * as Action from "../src/Action.ts"
import * as Agent from "../src/Agent.ts"
import * as Knowledge from "../src/Knowledge.ts"
import * as KnowledgeBase from "../src/KnowledgeBase.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

const corpus = () => {
  const dir = mkdtempSync(join(tmpdir(), "rolecraft-knowledge-"))
  writeFileSync(join(dir, "refunds.md"), "Refunds are paid within 30 days of a cancelled booking.")
  writeFileSync(join(dir, "pets.txt"), "Pets are welcome in every hotel room for a small fee.")
  writeFileSync(join(dir, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00]))
  writeFileSync(join(dir, "empty.md"), "")
  return dir
}

/** A local action that returns the sources and texts of `context.knowledge`. */
const answer = Action.local({
  description: "Answer a guest's question",
  parameters: { question: Schema.String, guest: Schema.String, nights: Schema.Number },
  run: (_args, context) => context.knowledge.map((p) => [p.source, p.text])
})

const concierge = (knowledge: ReadonlyArray<string>, retrieval: Knowledge.Retrieval<any> = { topK: 1 }) =>
  Role.make({
    identity: identity("concierge"),
    spec: { knowledge },
    actions: {
      answer: answer.pipe(Action.retrieval(retrieval)),
      plain: answer
    }
  })

describe("Knowledge (SPEC §9 step 6)", () => {
  it("the default query joins the string arguments in declared order", () => {
    assert.strictEqual(
      Knowledge.defaultQuery({ question: "pets allowed?", nights: 3, guest: "Ada", note: "" }),
      "pets allowed? Ada"
    )
  })

  it.live("retrieved passages reach the action as context.knowledge; an action without retrieval gets none", () =>
    Effect.gen(function* () {
      const dir = corpus()
      const agent = yield* Agent.make({ id: "a", roles: [concierge([dir])] })
      const params = { question: "Are pets welcome in the room?", guest: "Ada", nights: 2 }
      assert.deepStrictEqual(yield* agent.executeAction("answer", params), [
        [join(dir, "pets.txt"), "Pets are welcome in every hotel room for a small fee."]
      ])
      assert.deepStrictEqual(yield* agent.executeAction("plain", params), [])
      rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(KnowledgeBase.layer))
  )

  it.live("query(args) and topK shape the search", () =>
    Effect.gen(function* () {
      const dir = corpus()
      const role = concierge([dir], { topK: 5, query: (args: { guest: string }) => `${args.guest} refunds cancelled` })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      const passages = yield* agent.executeAction("answer", { question: "pets", guest: "Ada", nights: 1 })
      assert.strictEqual((passages as ReadonlyArray<ReadonlyArray<string>>)[0]![0], join(dir, "refunds.md"))
      rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(KnowledgeBase.layer))
  )

  it.live(
    "a knowledge base loads a role's sources once: later edits are not seen through it, a new base sees them",
    () =>
      Effect.gen(function* () {
        const dir = corpus()
        const role = concierge([dir])
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        const params = { question: "iguanas", guest: "Ada", nights: 1 }
        const base = yield* KnowledgeBase.makeFiles
        const withBase = Effect.provideService(KnowledgeBase.KnowledgeBase, base)
        assert.deepStrictEqual(yield* agent.executeAction("answer", params).pipe(withBase), [])
        writeFileSync(join(dir, "iguanas.md"), "Iguanas must stay in their terrarium.")
        assert.deepStrictEqual(
          yield* agent.executeAction("answer", params).pipe(withBase),
          [],
          "the cached index is used"
        )
        const fresh = yield* KnowledgeBase.makeFiles
        const found = yield* agent
          .executeAction("answer", params)
          .pipe(Effect.provideService(KnowledgeBase.KnowledgeBase, fresh))
        assert.strictEqual(found.length, 1)
        rmSync(dir, { recursive: true })
      })
  )

  it.live("a missing source fails executeAction with RetrievalFailure naming it, and execute lets it escape", () =>
    Effect.gen(function* () {
      const dir = corpus()
      const missing = join(dir, "gone")
      const runs = yield* Ref.make(0)
      const role = Role.make({
        identity: identity("concierge"),
        spec: { knowledge: [dir, missing] },
        actions: {
          answer: Action.local({
            description: "Answer",
            parameters: { question: Schema.String },
            run: () => Ref.update(runs, (n) => n + 1)
          }).pipe(Action.retrieval({})),
          plain: answer
        }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      const error = yield* Effect.flip(agent.executeAction("answer", { question: "pets" }))
      assert.deepStrictEqual([error._tag, error.action], ["RetrievalFailure", "answer"])
      assert.strictEqual(error._tag === "RetrievalFailure" ? error.source : "", missing)
      const escaped = yield* Effect.flip(agent.execute({ action: "answer", params: { question: "pets" } }))
      assert.strictEqual(escaped._tag, "RetrievalFailure")
      const unaffected = yield* agent.execute({
        action: "plain",
        params: { question: "pets", guest: "Ada", nights: 1 }
      })
      assert.isTrue(unaffected.success, "actions without retrieval never load the sources")
      assert.strictEqual(yield* Ref.get(runs), 0)
      rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(KnowledgeBase.layer))
  )

  it.effect("a query function that throws is RetrievalFailure", () =>
    Effect.gen(function* () {
      const role = concierge([], {
        query: () => {
          throw new Error("no query today")
        }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      const error = yield* Effect.flip(agent.executeAction("answer", { question: "q", guest: "g", nights: 1 }))
      assert.deepStrictEqual(
        [error._tag, error.message],
        ["RetrievalFailure", "answer: the retrieval query failed: no query today"]
      )
    }).pipe(Effect.provide(KnowledgeBase.layer))
  )

  it.effect("a KnowledgeBase provided to the call is searched instead of the agent's own", () =>
    Effect.gen(function* () {
      const fixed = yield* KnowledgeBase.make({
        load: () => Effect.succeed([{ source: "faq#pets", text: "Pets stay free on weekends." }])
      })
      const agent = yield* Agent.make({ id: "a", roles: [concierge(["/definitely/not/there"])] })
      const passages = yield* agent
        .executeAction("answer", { question: "pets", guest: "Ada", nights: 1 })
        .pipe(Effect.provideService(KnowledgeBase.KnowledgeBase, fixed))
      assert.deepStrictEqual(passages, [["faq#pets", "Pets stay free on weekends."]])
    })
  )
})
