<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<!-- PolyTopo: references by error class; label: reference / predicted holes. Labels are off; turn them on in Layer Properties › Labels. -->
<qgis version="3.22.0" styleCategories="Symbology|Labeling" labelsEnabled="0">
  <renderer-v2 type="RuleRenderer" symbollevels="0" forceraster="0" enableorderby="0">
    <rules key="root">
      <rule key="class-0" filter="&quot;error_class&quot; = 'ok'" symbol="0" label="ok: exterior and every hole matched"/>
      <rule key="class-1" filter="&quot;error_class&quot; = 'missing hole'" symbol="1" label="missing hole: a reference hole has no predicted hole"/>
      <rule key="class-2" filter="&quot;error_class&quot; = 'extra hole'" symbol="2" label="extra hole: a predicted hole has no reference hole"/>
      <rule key="class-3" filter="&quot;error_class&quot; = 'misplaced hole'" symbol="3" label="misplaced hole: reference and predicted holes both unmatched"/>
      <rule key="class-4" filter="&quot;error_class&quot; = 'invalid'" symbol="4" label="invalid: the prediction breaks a validity rule"/>
      <rule key="class-5" filter="&quot;error_class&quot; = 'exterior mismatch'" symbol="5" label="exterior mismatch: exterior boundary IoU does not pass the ring threshold"/>
      <rule key="class-6" filter="&quot;error_class&quot; = 'missed'" symbol="6" label="missed: no prediction matched (false negative)"/>
      <rule key="class-7" filter="ELSE" symbol="7" label="other: error class not set"/>
    </rules>
    <symbols>
      <symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="26,152,80,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="15,91,48,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="solid"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="1" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="244,109,67,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="LinePatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="angle" type="QString" value="45"/>
            <Option name="distance" type="QString" value="2.6"/>
            <Option name="line_width" type="QString" value="0.35"/>
            <Option name="color" type="QString" value="146,65,40,255"/>
          </Option>
          <symbol type="line" name="@1@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleLine" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="line_color" type="QString" value="146,65,40,255"/>
                <Option name="line_width" type="QString" value="0.35"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="146,65,40,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="solid"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="2" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="152,78,163,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="LinePatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="angle" type="QString" value="135"/>
            <Option name="distance" type="QString" value="2.6"/>
            <Option name="line_width" type="QString" value="0.35"/>
            <Option name="color" type="QString" value="91,46,97,255"/>
          </Option>
          <symbol type="line" name="@2@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleLine" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="line_color" type="QString" value="91,46,97,255"/>
                <Option name="line_width" type="QString" value="0.35"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="91,46,97,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="solid"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="3" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="230,171,2,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="LinePatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="angle" type="QString" value="45"/>
            <Option name="distance" type="QString" value="2.6"/>
            <Option name="line_width" type="QString" value="0.35"/>
            <Option name="color" type="QString" value="138,102,1,255"/>
          </Option>
          <symbol type="line" name="@3@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleLine" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="line_color" type="QString" value="138,102,1,255"/>
                <Option name="line_width" type="QString" value="0.35"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="LinePatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="angle" type="QString" value="135"/>
            <Option name="distance" type="QString" value="2.6"/>
            <Option name="line_width" type="QString" value="0.35"/>
            <Option name="color" type="QString" value="138,102,1,255"/>
          </Option>
          <symbol type="line" name="@3@2" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleLine" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="line_color" type="QString" value="138,102,1,255"/>
                <Option name="line_width" type="QString" value="0.35"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="138,102,1,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="solid"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="4" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="215,25,28,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="LinePatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="angle" type="QString" value="0"/>
            <Option name="distance" type="QString" value="2.6"/>
            <Option name="line_width" type="QString" value="0.35"/>
            <Option name="color" type="QString" value="129,15,16,255"/>
          </Option>
          <symbol type="line" name="@4@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleLine" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="line_color" type="QString" value="129,15,16,255"/>
                <Option name="line_width" type="QString" value="0.35"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="129,15,16,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="5" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="44,123,182,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="LinePatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="angle" type="QString" value="90"/>
            <Option name="distance" type="QString" value="2.6"/>
            <Option name="line_width" type="QString" value="0.35"/>
            <Option name="color" type="QString" value="26,73,109,255"/>
          </Option>
          <symbol type="line" name="@5@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleLine" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="line_color" type="QString" value="26,73,109,255"/>
                <Option name="line_width" type="QString" value="0.35"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="26,73,109,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="solid"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="6" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="140,81,10,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="PointPatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="distance_x" type="QString" value="2.2"/>
            <Option name="distance_y" type="QString" value="2.2"/>
            <Option name="displacement_x" type="QString" value="1.1"/>
            <Option name="displacement_y" type="QString" value="0"/>
          </Option>
          <symbol type="marker" name="@6@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleMarker" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="name" type="QString" value="circle"/>
                <Option name="size" type="QString" value="0.9"/>
                <Option name="color" type="QString" value="84,48,6,255"/>
                <Option name="outline_style" type="QString" value="no"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="84,48,6,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
      <symbol type="fill" name="7" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="189,189,189,70"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="113,113,113,255"/>
            <Option name="line_width" type="QString" value="1.0"/>
            <Option name="line_style" type="QString" value="dot"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
    </symbols>
  </renderer-v2>
  <labeling type="simple">
    <settings calloutType="simple">
      <text-style fieldName="'holes ' || &quot;ref_holes&quot; || ' / ' || coalesce(to_string(&quot;pred_holes&quot;), '–')" isExpression="1" fontSize="8" fontSizeUnit="Point" textColor="0,0,0,255"/>
      <text-buffer bufferDraw="1" bufferSize="0.8" bufferSizeUnits="MM" bufferColor="255,255,255,255"/>
      <placement placement="1" dist="0"/>
    </settings>
  </labeling>
</qgis>
