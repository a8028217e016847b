/** A Web type src/ names that Node's types declare only inside undici's: for the src/ modules Node tests import. */
type HeadersInit = ConstructorParameters<typeof Headers>[0];
