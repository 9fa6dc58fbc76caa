/**
 * Which durable chats this process runs, for the engines that run every
 * workflow in this process (`layerSingle`, `layerTest`). There a message
 * to a workflow nobody registered here waits for a registration that never
 * comes: Effect's sharding holds a send until the entity type is registered
 * on the runner that owns its shard, and with one runner that is this
 * process. So `start`, `decide` and `cancel` check first and fail with a
 * ValidationError saying what to provide, instead of hanging with nothing
 * logged. The cluster engine (`layerCluster`) does not provide this
 * service: there a client process sends to runners elsewhere.
 */
import { ValidationError } from "@rolecraft/core/ActionError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The engine that runs every workflow here (its layer's name), and the durable chats registered with it. */
export class LocalWorkflows extends Context.Service<
  LocalWorkflows,
  { readonly engine: string; readonly names: Set<string> }
>()("@rolecraft/durable/LocalWorkflows") {}

/** The service for an engine layer named `engine` (each build starts with no chat registered). */
export const layer = (engine: string): Layer.Layer<LocalWorkflows> =>
  Layer.sync(LocalWorkflows, () => ({ engine, names: new Set<string>() }))

/** Records that the durable chat `name` runs in this process (nothing when the engine is a cluster's). */
export const register = (name: string): Effect.Effect<void> =>
  Effect.serviceOption(LocalWorkflows).pipe(
    Effect.flatMap((local) =>
      local._tag === "Some" ? Effect.sync(() => void local.value.names.add(name)) : Effect.void
    )
  )

/**
 * Fails with a ValidationError when this process's engine runs every
 * workflow itself and the durable chat `name` was not registered here: a
 * message to it would wait forever.
 */
export const requireRegistered = (name: string, operation: string): Effect.Effect<void, ValidationError> =>
  Effect.serviceOption(LocalWorkflows).pipe(
    Effect.flatMap((local) => {
      if (local._tag === "None" || local.value.names.has(name)) return Effect.void
      const message =
        `${operation}: the durable chat ${JSON.stringify(name)} does not run in this process, and with ` +
        `DurableChat.${local.value.engine} no other process can run it, so the ${operation} would wait forever. ` +
        `Provide its layer here (DurableChat.make(${JSON.stringify(name)}).layer(agent), with the agent's model), ` +
        "or use DurableChat.layerCluster, where a process without the agent sends to the runners that have it"
      return Effect.fail(
        new ValidationError({ action: operation, message, issues: [{ path: "layer", message: "not provided" }] })
      )
    })
  )
