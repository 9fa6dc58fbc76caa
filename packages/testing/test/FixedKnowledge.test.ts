import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { Effect, Schema } from "effect"
import * as FixedKnowledge from "../src/FixedKnowledge.ts"

const concierge = Role.make({
  identity: { name: "concierge", goal: "Answer guests", domain: "hotels" },
  spec: { knowledge: ["/not/read/by/the/fixed/base"] },
  actions: {
    answer: Action.local({
      description: "Answer a question",
      parameters: { question: Schema.String },
      run: (_args, context) => context.knowledge.map((p) => p.source)
    }).pipe(Action.retrieval({ topK: 2 }))
  }
})

describe("FixedKnowledge", () => {
  it.effect("the agent's retrieval searches the given documents, ranked by the real index", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "a", roles: [concierge] })
      assert.deepStrictEqual(yield* agent.executeAction("answer", { question: "late checkout fee" }), [
        "faq#checkout",
        "faq#fees"
      ])
      assert.deepStrictEqual(yield* agent.executeAction("answer", { question: "parrots" }), [])
    }).pipe(
      Effect.provide(
        FixedKnowledge.layer({
          "faq#pets": "Dogs and cats are welcome.",
          "faq#checkout": "Late checkout until 2 pm costs a small fee.",
          "faq#fees": "Every fee is listed at the desk."
        })
      )
    )
  )

  it.effect("documents may be given as a list", () =>
    Effect.gen(function* () {
      const base = yield* FixedKnowledge.make([{ source: "a", text: "alpha beta" }])
      const found = yield* base.search({ action: "x", role: "r", sources: [], text: "beta", topK: 5 })
      assert.deepStrictEqual(
        found.map((p) => [p.source, p.text]),
        [["a", "alpha beta"]]
      )
    })
  )
})
