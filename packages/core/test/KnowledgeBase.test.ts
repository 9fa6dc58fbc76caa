import { execFileSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as KnowledgeBase from "../src/KnowledgeBase.ts"

/** A knowledge directory with text files, a nested one, a binary file, invalid UTF-8 and empty files. */
const makeCorpus = () => {
  const dir = mkdtempSync(join(tmpdir(), "rolecraft-knowledge-"))
  writeFileSync(join(dir, "refunds.md"), "Refunds are paid within 30 days of a cancelled booking.")
  writeFileSync(join(dir, "pets.txt"), "Pets are welcome in every hotel room for a small fee.")
  mkdirSync(join(dir, "nested", "deeper"), { recursive: true })
  writeFileSync(join(dir, "nested", "deeper", "breakfast.md"), "Breakfast is served from 7 to 10 in the lobby.")
  writeFileSync(join(dir, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00]))
  writeFileSync(join(dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe]))
  writeFileSync(join(dir, "empty.md"), "")
  writeFileSync(join(dir, "blank.md"), "  \n\t\n")
  return dir
}

const query = (text: string, sources: ReadonlyArray<string>, topK = 5): KnowledgeBase.Query => ({
  action: "answer",
  role: "concierge",
  sources,
  text,
  topK
})

describe("KnowledgeBase", () => {
  it("textOf keeps UTF-8 text and refuses NUL bytes, invalid UTF-8 and blank files", () => {
    const encode = (s: string) => new TextEncoder().encode(s)
    assert.strictEqual(KnowledgeBase.textOf(encode("café ☕")), "café ☕")
    assert.strictEqual(KnowledgeBase.textOf(Uint8Array.of(0x61, 0x00, 0x62)), undefined)
    assert.strictEqual(KnowledgeBase.textOf(Uint8Array.of(0x63, 0xe9)), undefined)
    assert.strictEqual(KnowledgeBase.textOf(encode(" \n ")), undefined)
    assert.strictEqual(KnowledgeBase.textOf(new Uint8Array()), undefined)
  })

  it.live("loadFiles: a directory gives each text file as one document; binary and empty files are skipped", () =>
    Effect.gen(function* () {
      const dir = makeCorpus()
      const documents = yield* KnowledgeBase.loadFiles([dir])
      assert.deepStrictEqual(
        documents.map((d) => d.source),
        [join(dir, "nested", "deeper", "breakfast.md"), join(dir, "pets.txt"), join(dir, "refunds.md")]
      )
      assert.strictEqual(documents[2]!.text, "Refunds are paid within 30 days of a cancelled booking.")
      const single = yield* KnowledgeBase.loadFiles([join(dir, "pets.txt"), join(dir, "pets.txt")])
      assert.deepStrictEqual(
        single.map((d) => d.source),
        [join(dir, "pets.txt")]
      )
      rmSync(dir, { recursive: true })
    })
  )

  it.live("loadFiles: a missing source, or an unreadable file, is SourceError naming the path", () =>
    Effect.gen(function* () {
      const dir = makeCorpus()
      const missing = join(dir, "no-such-dir")
      const error = yield* Effect.flip(KnowledgeBase.loadFiles([dir, missing]))
      assert.deepStrictEqual([error._tag, error.source], ["KnowledgeSourceError", missing])
      assert.include(error.message, "no such file or directory")
      if (process.getuid?.() !== 0) {
        const locked = join(dir, "locked.md")
        writeFileSync(locked, "secret plans")
        chmodSync(locked, 0o000)
        const unreadable = yield* Effect.flip(KnowledgeBase.loadFiles([dir]))
        assert.deepStrictEqual([unreadable.source, unreadable.message.includes("permission denied")], [locked, true])
      }
      rmSync(dir, { recursive: true })
    })
  )

  // "Unreadable" that holds as root too (root reads a 0o000 file): a source that no read can give a
  // document — a FIFO (reading it would wait for a writer forever), a dangling symbolic link, a
  // path through a file as if it were a directory — is SourceError naming the path; inside a
  // directory, FIFOs and links are not regular files and are skipped without being opened.
  it.live("loadFiles: a FIFO, a dangling link or a path through a file is SourceError naming it, also as root", () =>
    Effect.gen(function* () {
      const dir = makeCorpus()
      const fifo = join(dir, "pipe.md")
      execFileSync("mkfifo", [fifo])
      const dangling = join(dir, "gone.md")
      symlinkSync(join(dir, "no-such-file.md"), dangling)
      const throughFile = join(dir, "refunds.md", "inner.md")
      for (const [source, words] of [
        [fifo, "neither a file nor a directory"],
        [dangling, "no such file or directory"],
        [throughFile, "cannot open knowledge source"]
      ] as const) {
        const error = yield* Effect.flip(KnowledgeBase.loadFiles([source]))
        assert.deepStrictEqual([error._tag, error.source], ["KnowledgeSourceError", source])
        assert.include(error.message, words)
      }
      const documents = yield* KnowledgeBase.loadFiles([dir])
      assert.isFalse(documents.some((document) => document.source === fifo || document.source === dangling))
      assert.isAbove(documents.length, 0)
      rmSync(dir, { recursive: true })
    })
  )

  it.live("search ranks the matching document first and returns at most topK passages", () =>
    Effect.gen(function* () {
      const dir = makeCorpus()
      const base = yield* KnowledgeBase.makeFiles
      const passages = yield* base.search(query("refund for a cancelled booking", [dir]))
      assert.strictEqual(passages[0]!.source, join(dir, "refunds.md"))
      assert.isAbove(passages[0]!.score, 0)
      const prefixes = yield* base.search(query("breakfas lobb", [dir], 1))
      assert.deepStrictEqual(
        prefixes.map((p) => p.source),
        [join(dir, "nested", "deeper", "breakfast.md")]
      )
      assert.deepStrictEqual(yield* base.search(query("hotel", [dir], 0)), [])
      assert.deepStrictEqual(yield* base.search(query("   ", [dir])), [])
      assert.deepStrictEqual(yield* base.search(query("zebra", [dir])), [])
      rmSync(dir, { recursive: true })
    })
  )

  it.effect("prefix matches always; typos only with fuzzy", () =>
    Effect.gen(function* () {
      const load = () => Effect.succeed([{ source: "menu", text: "Breakfast is served in the lobby." }])
      const exact = yield* KnowledgeBase.make({ load })
      const fuzzy = yield* KnowledgeBase.make({ load, fuzzy: 0.2 })
      assert.strictEqual((yield* exact.search(query("breakf", []))).length, 1)
      assert.strictEqual((yield* exact.search(query("brekfast", []))).length, 0)
      assert.strictEqual((yield* fuzzy.search(query("brekfast", []))).length, 1)
    })
  )

  it.effect("each list of sources is loaded once (concurrent first searches share it); a failed load is retried", () =>
    Effect.gen(function* () {
      const loads = yield* Ref.make<ReadonlyArray<ReadonlyArray<string>>>([])
      const failNext = yield* Ref.make(true)
      const base = yield* KnowledgeBase.make({
        load: (sources) =>
          Effect.gen(function* () {
            yield* Ref.update(loads, (all) => [...all, sources])
            yield* Effect.sleep("1 second")
            if (sources[0] === "flaky" && (yield* Ref.getAndSet(failNext, false))) {
              return yield* new KnowledgeBase.SourceError({ source: "flaky", message: "not there yet" })
            }
            return [{ source: `${sources.join(",")}/doc`, text: "room service menu" }]
          })
      })
      const fiber = yield* Effect.forkChild(
        Effect.all(
          Array.from({ length: 10 }, () => base.search(query("menu", ["a", "b"]))),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("1 second")
      const results = yield* Fiber.join(fiber)
      assert.deepStrictEqual(results[9], [
        { source: "a,b/doc", text: "room service menu", score: results[9]![0]!.score }
      ])
      assert.deepStrictEqual(yield* base.search(query("menu", ["a", "b"])), results[0])
      const first = yield* Effect.forkChild(Effect.flip(base.search(query("menu", ["flaky"]))))
      yield* TestClock.adjust("1 second")
      const failure = yield* Fiber.join(first)
      assert.deepStrictEqual([failure._tag, failure.action, failure.source], ["RetrievalFailure", "answer", "flaky"])
      assert.include(failure.message, "concierge")
      const second = yield* Effect.forkChild(base.search(query("menu", ["flaky"])))
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* Fiber.join(second)).length, 1)
      assert.deepStrictEqual(yield* Ref.get(loads), [["a", "b"], ["flaky"], ["flaky"]])
    })
  )
})
