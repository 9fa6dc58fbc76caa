/**
 * The knowledge base service: full-text search over a role's
 * knowledge sources. The in-memory implementation indexes documents with
 * `minisearch` (BM25+, prefix and fuzzy matching); {@link loadFiles} reads
 * file and directory sources (each text file one document), and each list of
 * sources is loaded and indexed once, then cached for the life of the base.
 *
 * @example
 * ```ts
 * import { KnowledgeBase } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const base = yield* KnowledgeBase.KnowledgeBase
 *   return yield* base.search({ action: "answer", role: "policies", sources: ["./handbook"], text: "refund window", topK: 3 })
 * }).pipe(Effect.provide(KnowledgeBase.layer))
 * ```
 *
 * @since 0.1.0
 */
import type { Dirent } from "node:fs"
import * as Cache from "effect/Cache"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { expected } from "./internal/expectedError.ts"
import type MiniSearch from "minisearch"
import { RetrievalFailure } from "./ActionError.ts"
import * as Lazy from "./internal/lazy.ts"

// The search library is loaded by the first index built, not at import.
const MiniSearchModule = Lazy.make((): Promise<typeof import("minisearch")> => import("minisearch"))

// Node's file system modules, loaded by the first read of a knowledge source (Node keeps them once loaded).
const fs = () => process.getBuiltinModule("node:fs/promises")
const path = () => process.getBuiltinModule("node:path")

/**
 * One retrieved passage: its `source` (file path or document id), `text`,
 * and search `score` (higher is better; BM25+ with prefix and fuzzy matches
 * weighted down).
 *
 * @category models
 * @since 0.1.0
 */
export interface Passage {
  readonly source: string
  readonly text: string
  readonly score: number
}

/**
 * A document to index: where it came from and its text.
 *
 * @category models
 * @since 0.1.0
 */
export interface Document {
  readonly source: string
  readonly text: string
}

/**
 * One search: the calling `action` and `role` (named in failures), the role's
 * knowledge `sources`, the query `text` and how many passages to return
 * (`topK`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Query {
  readonly action: string
  readonly role: string
  readonly sources: ReadonlyArray<string>
  readonly text: string
  readonly topK: number
}

/**
 * A knowledge source could not be loaded: `source` names the path (the
 * source itself, or the file inside a directory source that failed).
 *
 * @category errors
 * @since 0.1.0
 */
export class SourceError extends expected(
  Schema.TaggedError<SourceError>()("KnowledgeSourceError", {
    source: Schema.String,
    message: Schema.String,
    cause: Schema.optionalKey(Schema.Defect())
  })
) {}

/**
 * The knowledge base service: `search(query)` returns at most `topK`
 * passages, best first, or fails `RetrievalFailure` naming the action and
 * the source that could not be loaded.
 *
 * @category services
 * @since 0.1.0
 */
export class KnowledgeBase extends Context.Service<
  KnowledgeBase,
  {
    readonly search: (query: Query) => Effect.Effect<ReadonlyArray<Passage>, RetrievalFailure>
  }
>()("@rolecraft/core/KnowledgeBase") {}

/**
 * Loads the documents of a list of sources.
 *
 * @category models
 * @since 0.1.0
 */
export type Loader = (sources: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Document>, SourceError>

const index = (
  MiniSearch: typeof import("minisearch").default,
  documents: ReadonlyArray<Document>,
  fuzzy: number | undefined
): MiniSearch<Document & { readonly id: number }> => {
  const search = new MiniSearch<Document & { readonly id: number }>({
    fields: ["text"],
    storeFields: ["source", "text"],
    searchOptions: { prefix: true, ...(fuzzy === undefined || fuzzy <= 0 ? {} : { fuzzy }) }
  })
  search.addAll(documents.map((document, id) => ({ id, source: document.source, text: document.text })))
  return search
}

const noPassages: ReadonlyArray<Passage> = []

/**
 * An in-memory knowledge base over a {@link Loader}: the first search for a
 * list of sources loads and indexes them (concurrent first searches share
 * the load); later searches reuse the index. A failed load is not cached, so
 * a source that appears later is picked up by the next search.
 *
 * Query terms match whole words and word prefixes (`breakf` finds
 * "breakfast"). `fuzzy` (default off) also matches words within that share
 * of edits of a term (minisearch's `fuzzy`, e.g. `0.2`); it costs several
 * times more per search.
 *
 * `topK` is floored; `topK < 1` or an empty query returns no passages.
 * Fails `RetrievalFailure` (with `source`) when the loader fails.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KnowledgeBase } from "@rolecraft/core"
 *
 * const fixed = KnowledgeBase.make({
 *   load: () => Effect.succeed([{ source: "policy", text: "Refunds within 30 days" }])
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: {
  readonly load: Loader
  readonly fuzzy?: number | undefined
}): Effect.Effect<KnowledgeBase["Service"]> => Effect.suspend(() => makeNow(options))

type Index = ReturnType<typeof index>

const makeNow = (options: {
  readonly load: Loader
  readonly fuzzy?: number | undefined
}): Effect.Effect<KnowledgeBase["Service"]> => {
  // Indexes already built, read without an effect on the hot path; the Cache
  // loads each missing one once (concurrent searches share it) and keeps no
  // failure.
  const ready = new Map<string, Index>()
  const keys = new WeakMap<ReadonlyArray<string>, string>()
  const keyOf = (sources: ReadonlyArray<string>): string => {
    let key = keys.get(sources)
    if (key === undefined) {
      key = JSON.stringify(sources)
      keys.set(sources, key)
    }
    return key
  }
  const passages = (search: Index, query: Query, topK: number): ReadonlyArray<Passage> =>
    search
      .search(query.text)
      .slice(0, topK)
      .map((hit) => ({ source: hit.source as string, text: hit.text as string, score: hit.score }))
  return Effect.map(
    Cache.makeWith(
      (key: string) =>
        Effect.flatMap(options.load(JSON.parse(key) as Array<string>), (documents) =>
          MiniSearchModule.use((module) =>
            Effect.sync(() => {
              const built = index(module.default, documents, options.fuzzy)
              ready.set(key, built)
              return built
            })
          )
        ),
      {
        capacity: 1024,
        timeToLive: (exit) => (Exit.isSuccess(exit) ? Duration.infinity : Duration.zero)
      }
    ),
    (cache) =>
      KnowledgeBase.of({
        search: (query) => {
          const topK = Math.floor(query.topK)
          if (topK < 1 || query.text.trim() === "") return Effect.succeed(noPassages)
          const key = keyOf(query.sources)
          const built = ready.get(key)
          if (built !== undefined) return Effect.sync(() => passages(built, query, topK))
          return Cache.get(cache, key).pipe(
            Effect.map((search) => passages(search, query, topK)),
            Effect.mapError(
              (error) =>
                new RetrievalFailure({
                  action: query.action,
                  source: error.source,
                  message: `${query.action}: knowledge of role ${query.role} could not be loaded: ${error.message}`,
                  ...(error.cause === undefined ? {} : { cause: error.cause })
                })
            )
          )
        }
      })
  )
}

const reason = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code === "ENOENT"
      ? "no such file or directory"
      : cause.code === "EACCES" || cause.code === "EPERM"
        ? "permission denied"
        : cause.code
    : cause instanceof Error
      ? cause.message
      : String(cause)

const sourceError = (source: string, what: string) => (cause: unknown) =>
  new SourceError({ source, message: `${what} ${source}: ${reason(cause)}`, cause })

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The text of a file's bytes, or `undefined` when the file is not a text
 * document: it holds a NUL byte, is not valid UTF-8, or is empty or
 * whitespace only.
 *
 * @category getters
 * @since 0.1.0
 */
export const textOf = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  let text: string
  // A decoding failure is the answer here, not an error: the file is binary.
  try {
    text = utf8.decode(bytes)
  } catch {
    return undefined
  }
  return text.trim() === "" ? undefined : text
}

const readDocument = (path: string): Effect.Effect<Document | undefined, SourceError> =>
  Effect.tryPromise({ try: () => fs().readFile(path), catch: sourceError(path, "cannot read knowledge file") }).pipe(
    Effect.map((bytes) => {
      const text = textOf(bytes)
      return text === undefined ? undefined : { source: path, text }
    })
  )

const filesOf = (source: string): Effect.Effect<ReadonlyArray<string>, SourceError> =>
  Effect.tryPromise({ try: () => fs().stat(source), catch: sourceError(source, "cannot open knowledge source") }).pipe(
    Effect.flatMap((stats) => {
      if (stats.isFile()) return Effect.succeed([source])
      if (!stats.isDirectory()) {
        return Effect.fail(
          new SourceError({ source, message: `knowledge source ${source} is neither a file nor a directory` })
        )
      }
      return Effect.tryPromise({
        try: () => fs().readdir(source, { recursive: true, withFileTypes: true }),
        catch: sourceError(source, "cannot list knowledge directory")
      }).pipe(
        Effect.map((entries: ReadonlyArray<Dirent>) =>
          entries
            .filter((entry) => entry.isFile())
            .map((entry) => path().join(entry.parentPath, entry.name))
            .sort()
        )
      )
    })
  )

/**
 * Loads file and directory sources with `node:fs/promises`: a file is one
 * document; a directory gives every regular file under it, recursively
 * (symbolic links inside it are not followed), in path order. Binary files
 * (a NUL byte or invalid UTF-8) and empty files are skipped without failing.
 * Relative paths are resolved against the working directory; a document's
 * `source` is its path as found.
 *
 * Fails `SourceError` naming the path when a source does not exist, or a
 * file or directory cannot be read.
 *
 * @category storage
 * @since 0.1.0
 */
export const loadFiles: Loader = (sources) =>
  Effect.forEach(sources, filesOf, { concurrency: 4 }).pipe(
    Effect.flatMap((lists) => Effect.forEach([...new Set(lists.flat())], readDocument, { concurrency: 8 })),
    Effect.map((documents) => documents.filter((document): document is Document => document !== undefined))
  )

/**
 * An in-memory knowledge base over file and directory sources: `make({ load:
 * loadFiles })`. An agent given no `KnowledgeBase` makes one of these of its
 * own.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeFiles: Effect.Effect<KnowledgeBase["Service"]> = make({ load: loadFiles })

/**
 * {@link makeFiles} as a layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<KnowledgeBase> = Layer.effect(KnowledgeBase, makeFiles)
