// What the migrate commands read: the ConfigMap reader is -validate's too (corefile/configmap.ts).
export {
  configMapData,
  InputError as MigrateError,
  readInput,
  type ConfigMapData,
  type Input,
} from "../corefile/configmap.ts";
