// The ceiling of any Express service on this machine: parse a JSON body, echo it back.
import express from "express";

const app = express();
app.use(express.json({ limit: "10mb" }));
app.post("/echo", (req, res) => {
  res.json(req.body);
});
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") process.stdout.write(`echo ready at http://127.0.0.1:${address.port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
