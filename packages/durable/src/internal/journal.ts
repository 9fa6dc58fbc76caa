/**
 * A run's journal: its steps recorded in the run store, so that an effect that finished is found by its
 * re-run instead of being done again. A step is read from the record when there is one; otherwise it runs,
 * uninterruptibly, and its result is recorded before the step returns — the first record of a step stands
 * (of two runners doing it at once, both go on with the first record). The run's recorded steps are read once
 * when the run (or its replay) starts.
 *
 * The store may be unreachable meanwhile (a database restarting): reads and records are retried on a capped
 * exponential schedule until it answers. A result that finished is held for up to {@link outlast} while its
 * record is retried, uninterruptibly, so that a runner losing its shards in the outage still records it; past
 * that the retries go on interruptibly, and a run taken from this runner meanwhile runs the step again. A
 * record that does not decode is a defect carrying an EXECUTION `StoreError` that names the run and the step,
 * which the run turns into its failure.
 */
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as RunStore from "../RunStore.ts"

/** How long a finished step holds its runner while its record is retried: 60 seconds. */
export const outlast: Duration.Duration = Duration.seconds(60)

/** The store's outage retried: 100 ms, doubling, at most 2 s apart. */
const outage = Schedule.min([Schedule.exponential("100 millis", 2), Schedule.spaced("2 seconds")])

/** A store operation retried while the store is unreachable; any other refusal is the run's defect. */
export const persist = <A>(operation: Effect.Effect<A, StoreBoundary.StoreError>): Effect.Effect<A> =>
  operation.pipe(Effect.retry({ schedule: outage, while: (error) => error.category === "TRANSIENT" }), Effect.orDie)

const store = "the durable run store"

// node:crypto is loaded by the first step name that needs a digest, not at import.
const sha256 = (text: string): string => process.getBuiltinModule("node:crypto").hash("sha256", text, "hex")

/**
 * A step's name from its parts (`tool/3/call_1`): as it is when a store can hold it, else `#` and the
 * SHA-256 of it (a model's tool call id may hold a NUL or be very long). No plain name starts with `#`.
 */
export const stepName = (...parts: ReadonlyArray<string | number>): string => {
  const name = parts.join("/")
  return StoreBoundary.textProblem(name, 512) === undefined ? name : `#${sha256(name)}`
}

/** The journal of one run (see the module doc). */
export interface Journal {
  /** The step's record: read, or `effect` run, recorded and the first record returned. */
  readonly step: <S extends Schema.Top & { readonly DecodingServices: never; readonly EncodingServices: never }, R>(
    name: string,
    schema: S,
    effect: Effect.Effect<S["Type"], never, R>
  ) => Effect.Effect<S["Type"], never, R>
  /** The step's record when the journal holds one (read at the start, or recorded since). */
  readonly peek: <S extends Schema.Top & { readonly DecodingServices: never }>(
    name: string,
    schema: S
  ) => Effect.Effect<Option.Option<S["Type"]>>
}

const codecs = new WeakMap<Schema.Top, Schema.Top>()
const codecOf = <S extends Schema.Top>(schema: S): Schema.Codec<S["Type"], string> => {
  const found = codecs.get(schema)
  if (found !== undefined) return found as never
  const made = Schema.fromJsonString(Schema.toCodecJson(schema))
  codecs.set(schema, made)
  return made as never
}

/** Opens the journal of run `runId` of workflow `workflow`: its recorded steps read once. */
export const open = (service: RunStore.RunStore["Service"], workflow: string, runId: string): Effect.Effect<Journal> =>
  Effect.map(persist(service.readSteps(workflow, runId)), (read) => {
    const bodies = new Map(read)
    const decode = <S extends Schema.Top & { readonly DecodingServices: never }>(
      name: string,
      schema: S,
      body: string
    ): Effect.Effect<S["Type"]> =>
      Effect.orDie(
        StoreBoundary.decodeRow(
          store,
          `step ${JSON.stringify(name)} of run ${JSON.stringify(runId)}`,
          codecOf(schema),
          body
        )
      )
    const record = (name: string, body: string) => persist(service.recordStep(workflow, runId, name, body))
    return {
      peek: (name, schema) => {
        const body = bodies.get(name)
        return body === undefined ? Effect.succeed(Option.none()) : Effect.map(decode(name, schema, body), Option.some)
      },
      step: (name, schema, effect) =>
        Effect.suspend(() => {
          const body = bodies.get(name)
          if (body !== undefined) return decode(name, schema, body)
          const encode = Schema.encodeEffect(codecOf(schema))
          return Effect.uninterruptibleMask((restore) =>
            Effect.gen(function* () {
              const value = yield* effect
              const text = yield* Effect.orDie(encode(value))
              const within = yield* Effect.timeoutOption(record(name, text), outlast)
              const first = Option.isSome(within) ? within.value : yield* restore(record(name, text))
              bodies.set(name, first)
              return first === text ? value : yield* decode(name, schema, first)
            })
          )
        })
    }
  })
