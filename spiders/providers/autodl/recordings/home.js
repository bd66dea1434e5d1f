/* gpurent replay recording: our own script, not AutoDL's bundle.
 * The data object mirrors the per-GPU `originalPrice` fields the real homepage bundle
 * carries (yuan per card per hour); values are the AutoDL rows of a third-party Chinese
 * price report's transcription of https://www.autodl.com/home (2026-10; see PROVENANCE).
 * `memberPrice` is set where that report notes a member price. */
(function () {
  "use strict";

  var gpuPriceList = [
    { gpuName: "RTX 4090", memory: 24, originalPrice: 1.98, memberPrice: 1.88 },
    { gpuName: "RTX 4090D", memory: 24, originalPrice: 2.08 },
    { gpuName: "RTX 5090", memory: 32, originalPrice: 2.93, memberPrice: 2.78 },
    { gpuName: "RTX 3090", memory: 24, originalPrice: 1.39, memberPrice: 1.32 },
    { gpuName: "V100", memory: 32, originalPrice: 1.98 },
    { gpuName: "L20", memory: 48, originalPrice: 3.87 },
    { gpuName: "A40", memory: 48, originalPrice: 3.14 },
    { gpuName: "L40", memory: 48, originalPrice: 4.82 },
    { gpuName: "A800-80G", memory: 80, originalPrice: 5.88, memberPrice: 5.59 },
    { gpuName: "A100 SXM4", memory: 80, originalPrice: 7.03 },
    { gpuName: "H800-80G", memory: 80, originalPrice: 10.5 },
    { gpuName: "H20-96G", memory: 96, originalPrice: 10.5 },
    { gpuName: "RTX PRO 6000", memory: 96, originalPrice: 7.35 },
    { gpuName: "MTT S4000", memory: 48, originalPrice: 1.96, memberPrice: 1.86 },
    { gpuName: "Ascend 910B2", memory: 64, originalPrice: 3.87 }
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
    var body = document.getElementById("gpu-price-body");
    gpuPriceList.forEach(function (gpu) {
      var row = document.createElement("tr");
      row.className = "gpu-row";
      cell(row, "gpu-name", gpu.gpuName);
      cell(row, "gpu-memory", gpu.memory + "GB");
      cell(row, "gpu-price", yuanPerHour(gpu.originalPrice));
      cell(row, "gpu-member-price", gpu.memberPrice ? "会员 " + yuanPerHour(gpu.memberPrice) : "-");
      body.appendChild(row);
    });
  }

  // Render after a tick, as a framework would after mounting: a reader that does not
  // wait for the rows sees an empty table.
  setTimeout(render, 50);
})();
