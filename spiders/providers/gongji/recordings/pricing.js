/* gpurent replay recording: our own script, not 共绩算力's. The RTX 4090 prices (¥1.98/h,
 * preemptible ¥1.19/h) follow a third-party price report on https://www.gongjiyun.com/pricing;
 * every other value is invented (see PROVENANCE). */
(function () {
  "use strict";

  var gpus = [
    { model: "RTX 4090", vram: 24, onDemand: 1.98, spot: 1.19, idle: 12, total: 64 },
    { model: "RTX 5090", vram: 32, onDemand: 2.88, spot: 1.69, idle: 0, total: 32 },
    { model: "RTX 3090", vram: 24, onDemand: 1.3, spot: 0.79, idle: 5, total: 40 },
    { model: "L40", vram: 48, onDemand: 3.6, spot: null, idle: 3, total: 16 },
    { model: "A800", vram: 80, onDemand: 5.6, spot: 3.36, idle: 6, total: 24 },
    { model: "H800", vram: 80, onDemand: 9.9, spot: 5.9, idle: 0, total: 8 },
    { model: "H20", vram: 96, onDemandText: "询价", spot: null, idle: 4, total: 8 }
  ];

  function yuanPerHour(value) {
    return "¥" + value.toFixed(2) + "/时";
  }

  function cell(row, className, text) {
    var td = document.createElement("td");
    td.className = className;
    td.textContent = text;
    row.appendChild(td);
  }

  function render() {
    var body = document.querySelector("#gpu-pricing tbody");
    gpus.forEach(function (gpu) {
      var row = document.createElement("tr");
      row.className = "gpu-row";
      cell(row, "gpu-model", gpu.model);
      cell(row, "gpu-vram", gpu.vram + "GB");
      cell(row, "price-on-demand", gpu.onDemandText || yuanPerHour(gpu.onDemand));
      cell(row, "price-spot", gpu.spot === null ? "—" : "抢占式 " + yuanPerHour(gpu.spot));
      cell(row, "stock", "空闲 " + gpu.idle + "/" + gpu.total);
      body.appendChild(row);
    });
  }

  // Render after a tick, as a framework would after mounting: a reader that does not
  // wait for the rows sees an empty table.
  setTimeout(render, 50);
})();
