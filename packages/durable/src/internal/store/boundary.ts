/**
 * The run store's contract and its boundary, the same for every storage: the operations (see
 * `RunStore.RunStore`), the ids and names checked before they reach a storage (VALIDATION naming the field),
 * and a stored status decoded on the way out (EXECUTION naming the run and the field).
 */
import * as StoreBoundary from "@rolecraft/core/StoreBoundary"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { RunStatus } from "../status.ts"

/** The most characters of a workflow name or a run id the store takes. */
export const maxIdLength = 200

/** The operations of a run store (see `RunStore.RunStore`). */
export interface Service {
  readonly create: (workflow: string, runId: string) => Effect.Effect<boolean, StoreBoundary.StoreError>
  readonly get: (workflow: string, runId: string) => Effect.Effect<Option.Option<RunStatus>, StoreBoundary.StoreError>
  readonly set: (workflow: string, runId: string, status: RunStatus) => Effect.Effect<boolean, StoreBoundary.StoreError>
  readonly recordStep: (
    workflow: string,
    runId: string,
    step: string,
    body: string
  ) => Effect.Effect<string, StoreBoundary.StoreError>
  readonly readStep: (
    workflow: string,
    runId: string,
    step: string
  ) => Effect.Effect<Option.Option<string>, StoreBoundary.StoreError>
  readonly readSteps: (
    workflow: string,
    runId: string
  ) => Effect.Effect<ReadonlyMap<string, string>, StoreBoundary.StoreError>
  readonly watch: (workflow: string, runId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
}

/**
 * The writes of one store value, for `watch`: `written` tells the watchers of a run that this store value
 * wrote its status (Effect's `PubSub`; nothing is kept when nobody watches).
 */
export const makeWatch = () => {
  const writes = Effect.runSync(PubSub.unbounded<string>())
  const keyOf = (workflow: string, runId: string) => JSON.stringify([workflow, runId])
  return {
    written: (workflow: string, runId: string): Effect.Effect<void> =>
      Effect.sync(() => {
        PubSub.publishUnsafe(writes, keyOf(workflow, runId))
      }),
    watch: (workflow: string, runId: string): Effect.Effect<Effect.Effect<void>, never, Scope.Scope> =>
      Effect.map(PubSub.subscribe(writes), (subscription) => {
        const key = keyOf(workflow, runId)
        const next: Effect.Effect<void> = Effect.flatMap(PubSub.take(subscription), (written) =>
          written === key ? Effect.void : next
        )
        return next
      })
  }
}

/** Refuses, as VALIDATION naming the field, a workflow name, run id or step name `store` cannot hold. */
export const checkKey = (
  store: string,
  workflow: string,
  runId: string,
  step?: string | undefined
): Effect.Effect<void, StoreBoundary.StoreError> => {
  const fields: Array<StoreBoundary.TextField> = [
    { field: "workflow", text: workflow, max: maxIdLength },
    { field: "runId", text: runId, max: maxIdLength }
  ]
  if (step !== undefined) fields.push({ field: "step", text: step })
  const refused = StoreBoundary.refusal(store, fields)
  if (refused !== undefined) return Effect.fail(refused)
  if (runId.length === 0) {
    return Effect.fail(
      new StoreBoundary.StoreError({
        store,
        category: "VALIDATION",
        field: "runId",
        message: `${store}: runId is empty`
      })
    )
  }
  return Effect.void
}

const StatusJson = Schema.fromJsonString(Schema.toCodecJson(RunStatus))
const encodeStatus = Schema.encodeSync(StatusJson)

/** A status as the store writes it: JSON. */
export const encode = (status: RunStatus): string => encodeStatus(status)

/** A stored status read back, or EXECUTION naming the store, the run and the field. */
export const decode = (
  store: string,
  runId: string,
  body: unknown
): Effect.Effect<RunStatus, StoreBoundary.StoreError> =>
  StoreBoundary.decodeRow(store, `status of run ${JSON.stringify(runId)}`, StatusJson, body)
