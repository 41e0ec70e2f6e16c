import { defineConfig } from "vite";

export default defineConfig({
  base: "./", // relative URLs: the built site works under any path (serve, preview, a static host)
  worker: { format: "es" },
  build: { target: "es2022", chunkSizeWarningLimit: 1024 },
  test: { include: ["src/**/*.test.ts"] },
});
