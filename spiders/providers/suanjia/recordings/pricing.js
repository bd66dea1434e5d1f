/* gpurent replay recording: our own script, not 算家云's. It stands for a price page whose
 * table is built in the browser; every value below is invented (see PROVENANCE). */
(function () {
  "use strict";

  var market = [
    { region: "华东一区", gpu: "RTX 4090", memory: 24, price: 1.88, idle: 3 },
    { region: "华东一区", gpu: "RTX 3090", memory: 24, price: 1.2, idle: 0 },
    { region: "华东一区", gpu: "L40", memory: 48, price: 3.9, idle: 0 },
    { region: "华东一区", label: "vGPU-32G", price: 0.99, idle: 8 },
    { region: "华北一区", gpu: "RTX 4090", memory: 24, price: 1.88, idle: 12 },
    { region: "华北一区", gpu: "RTX 5090", memory: 32, price: 2.68, idle: 1 },
    { region: "华北一区", gpu: "A100", memory: 80, price: 6.2, idle: 2 }
  ];

  function cell(row, className, text) {
    var td = document.createElement("td");
    td.className = className;
    td.textContent = text;
    row.appendChild(td);
  }

  function render() {
    var body = document.querySelector("#gpu-market tbody");
    market.forEach(function (item) {
      var row = document.createElement("tr");
      row.className = "gpu-row";
      cell(row, "region", item.region);
      cell(row, "gpu", item.label || item.gpu + " " + item.memory + "G");
      cell(row, "price", "¥" + item.price.toFixed(2) + "/小时");
      cell(row, "stock", item.idle > 0 ? "剩余" + item.idle + "卡" : "已租满");
      body.appendChild(row);
    });
  }

  // Render after a tick, as a framework would after mounting: a reader that does not
  // wait for the rows sees an empty table.
  setTimeout(render, 50);
})();
