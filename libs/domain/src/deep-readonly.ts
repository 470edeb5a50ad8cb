/**
 * What a read model hands out: the same value, with every property, array, map and set below it read-only.
 * A projection keeps its own mutable record type and exports `DeepReadonly` of it, so only the
 * projection's `apply` can change what routes and rules read ("never mutate a read model outside a
 * projection" as a type). It costs nothing at run time: the objects are the projection's own, not copies.
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<K, DeepReadonly<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<DeepReadonly<V>>
      : T extends object
        ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
        : T;
