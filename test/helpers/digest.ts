/** SHA-256 and length of a whole stream, read as it flows (workerd's DigestStream), never held. */
export async function digest(
  stream: ReadableStream<Uint8Array>,
): Promise<{ hex: string; bytes: number }> {
  const hasher = new crypto.DigestStream("SHA-256");
  let bytes = 0;
  await stream
    .pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          bytes += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    )
    .pipeTo(hasher);
  const hex = [...new Uint8Array(await hasher.digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return { hex, bytes };
}
