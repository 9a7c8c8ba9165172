//! What one host round trip costs on the first Vulkan adapter when the calling thread does
//! all of it, without cubecl's server and poll threads: a copy of 64 bytes into a mapped
//! buffer and the wait for it, alone and after a write and a one-thread dispatch (the shape
//! of a host step). Bounds what a host step through cubecl-wgpu's read could cost
//! (issue 49; `docs/results-log.md`, 2026-11-29).
//!
//! `cargo run --release -p cartfuse-fusion --features wgpu --example wgpu_round_trip`

use std::time::Instant;

fn main() {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let adapter = adapters.first().expect("an adapter");
    println!("{:?}", adapter.get_info().name);
    let (device, queue) =
        cubecl::future::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
            .unwrap();
    let size = 64u64;
    let storage = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read_write> b: array<u32>;
             @compute @workgroup_size(1) fn main() { b[0] = b[0] + b[1]; }"
                .into(),
        ),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &shader,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: storage.as_entire_binding(),
        }],
    });
    let wait = || device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let round = |dispatch: bool| {
        if dispatch {
            queue.write_buffer(&storage, 4, &1u32.to_le_bytes());
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        if dispatch {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&storage, 0, &staging, 0, size);
        queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        wait();
        let value = u32::from_le_bytes(
            staging.slice(..).get_mapped_range()[..4]
                .try_into()
                .unwrap(),
        );
        staging.unmap();
        value
    };
    for dispatch in [false, true, false, true] {
        for _ in 0..50 {
            round(dispatch);
        }
        let mut times: Vec<f64> = (0..500)
            .map(|_| {
                let start = Instant::now();
                round(dispatch);
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "dispatch {dispatch}: median {:.1} us, p10 {:.1}, p90 {:.1}",
            times[250], times[50], times[450]
        );
    }
}
